package workload

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// cdfFiles holds the built-in CDF files, unchanged copies of the ones in
// the project's shared workloads directory, so that a binary needs no data
// files beside it.
//
//go:embed cdfs/*.txt
var cdfFiles embed.FS

// builtin is one built-in flow-size distribution.
type builtin struct {
	name, file, about string
}

// builtins lists the built-in distributions in the order BuiltinCDFs
// reports them.
var builtins = []builtin{
	{"websearch", "WebSearch_distribution.txt", "web search (DCTCP paper), mean about 1.7 MB"},
	{"fbhadoop", "FbHdp_distribution.txt", "Facebook Hadoop, mean about 120 KB, median 700 B"},
	{"datamining", "DataMining_VL2.txt", "data mining (VL2 paper), heavy tail up to 1 GB"},
	{"alistorage", "AliStorage2019.txt", "Alibaba distributed storage 2019, mean about 41 KB"},
	{"googlerpc", "GoogleRPC2008.txt", "Google RPC sizes before 2008, mean about 2.9 KB"},
}

// BuiltinCDFs returns the names of the built-in flow-size distributions in
// a fixed order: websearch, fbhadoop, datamining, alistorage, googlerpc.
func BuiltinCDFs() []string {
	names := make([]string, len(builtins))
	for i, b := range builtins {
		names[i] = b.name
	}
	return names
}

// DescribeCDF returns a one-line description of a built-in distribution
// (for help texts), or "" if name is not built in.
func DescribeCDF(name string) string {
	if b, ok := findBuiltin(name); ok {
		return b.about
	}
	return ""
}

func findBuiltin(name string) (builtin, bool) {
	name = strings.ToLower(strings.TrimSpace(name))
	for _, b := range builtins {
		if b.name == name {
			return b, true
		}
	}
	return builtin{}, false
}

// BuiltinCDF returns the built-in distribution called name (any case).
func BuiltinCDF(name string) (*CDF, error) {
	b, ok := findBuiltin(name)
	if !ok {
		return nil, fmt.Errorf("unknown built-in CDF %q: the built-in ones are %s", name, strings.Join(BuiltinCDFs(), ", "))
	}
	f, err := cdfFiles.Open("cdfs/" + b.file)
	if err != nil {
		return nil, fmt.Errorf("built-in CDF %s: %v", b.name, err) // not reached: the files are embedded
	}
	defer f.Close()
	return ParseCDF(f, b.name, Auto)
}

// LoadCDF returns the distribution spec names: a built-in name (any case),
// or else the path of a CDF file, whose scale is detected (Auto). A
// built-in name wins over a file of the same name in the working
// directory; write "./websearch" to mean the file.
func LoadCDF(spec string) (*CDF, error) {
	if _, ok := findBuiltin(spec); ok {
		return BuiltinCDF(spec)
	}
	f, err := os.Open(spec)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("unknown CDF %q: neither a built-in (%s) nor an existing file", spec, strings.Join(BuiltinCDFs(), ", "))
		}
		return nil, fmt.Errorf("CDF %q is not a built-in (%s) and the file cannot be read: %v", spec, strings.Join(BuiltinCDFs(), ", "), err)
	}
	defer f.Close()
	return ParseCDF(f, spec, Auto)
}
