package controlplane

import (
	"sort"
	"strings"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// resolve finds which of names (full names, with their aliases beside
// them) name means: a full name or an alias exactly, else the one name
// that ends in "."+name, as p4runtime-shell accepts. None is NOT_FOUND
// and more than one INVALID_ARGUMENT, both naming the candidates.
func resolve(kind, name string, names, aliases []string) (int, error) {
	for i := range names {
		if names[i] == name || i < len(aliases) && aliases[i] == name {
			return i, nil
		}
	}
	var hits []int
	for i, n := range names {
		if strings.HasSuffix(n, "."+name) {
			hits = append(hits, i)
		}
	}
	switch len(hits) {
	case 1:
		return hits[0], nil
	case 0:
		if close := closest(name, names, 3); len(close) > 0 {
			return -1, status.Errorf(codes.NotFound, "no %s %q; the closest: %s", kind, name, strings.Join(close, ", "))
		}
		return -1, status.Errorf(codes.NotFound, "no %s %q (there are none)", kind, name)
	default:
		var amb []string
		for _, i := range hits {
			amb = append(amb, names[i])
		}
		return -1, status.Errorf(codes.InvalidArgument, "%s %q is ambiguous: %s", kind, name, strings.Join(amb, ", "))
	}
}

// resolvePreamble resolves name among P4Info objects by their preambles.
func resolvePreamble[T any](kind, name string, list []*T, preamble func(*T) *p4configv1.Preamble) (*T, error) {
	names := make([]string, len(list))
	aliases := make([]string, len(list))
	for i, x := range list {
		names[i], aliases[i] = preamble(x).GetName(), preamble(x).GetAlias()
	}
	i, err := resolve(kind, name, names, aliases)
	if err != nil {
		return nil, err
	}
	return list[i], nil
}

// resolveNamed resolves name among objects that have a name and no alias.
func resolveNamed[T any](kind, name string, list []*T, nameOf func(*T) string) (*T, error) {
	names := make([]string, len(list))
	for i, x := range list {
		names[i] = nameOf(x)
	}
	i, err := resolve(kind, name, names, nil)
	if err != nil {
		return nil, err
	}
	return list[i], nil
}

// closest is up to n of names nearest to name by edit distance, nearest
// first, comparing with whole names and with their last dotted part.
func closest(name string, names []string, n int) []string {
	type scored struct {
		name string
		d    int
	}
	var all []scored
	for _, c := range names {
		d := editDistance(name, c)
		if i := strings.LastIndex(c, "."); i >= 0 {
			d = min(d, editDistance(name, c[i+1:]))
		}
		all = append(all, scored{c, d})
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].d < all[j].d })
	var out []string
	for _, s := range all[:min(n, len(all))] {
		out = append(out, s.name)
	}
	return out
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
