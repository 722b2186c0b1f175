package v1model

import (
	"fmt"
	"slices"

	"github.com/p4rcm/p4rcm/v1model/bmjson"
)

// profile is an action profile: members (an action and its data) that
// entries of indirect tables point to, and with a selector, groups of
// members, one picked per packet by a hash of fields.
type profile struct {
	name     string
	actions  map[string]*action
	selector *calculation
	members  map[int]*member
	groups   map[int][]int // member ids, ascending
	max      int
}

type member struct {
	act  *action
	data []uint64
}

func (c *compiler) compileProfile(ap *bmjson.ActionProfile) (*profile, error) {
	pr := &profile{name: ap.Name, members: map[int]*member{}, groups: map[int][]int{}, max: ap.MaxSize, actions: map[string]*action{}}
	if ap.Selector != nil {
		calc, err := c.compileCalculation(&bmjson.Calculation{Name: ap.Name + " selector", Algo: ap.Selector.Algo, Input: ap.Selector.Input})
		if err != nil {
			return nil, fmt.Errorf("action_profiles %q: selector: %w", ap.Name, err)
		}
		pr.selector = calc
	}
	return pr, nil
}

// pick returns the member an indirect entry runs for this packet.
func (pr *profile) pick(e *entry, p *packet) *member {
	if !e.group {
		return pr.members[e.ref]
	}
	ids := pr.groups[e.ref]
	if len(ids) == 0 {
		return nil
	}
	// As BMv2: the hash modulo the group's size picks among the members
	// in the order of their handles.
	return pr.members[ids[pr.selector.compute(p)%uint64(len(ids))]]
}

func (sw *Switch) profileOf(name string) (*profile, error) {
	pr := sw.profiles[name]
	if pr == nil {
		return nil, fmt.Errorf("no action profile %q", name)
	}
	return pr, nil
}

// AddMember adds member id to an action profile: an action of the tables
// that use the profile, and its parameters.
func (sw *Switch) AddMember(profileName string, id int, action string, params []uint64) error {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	pr, err := sw.profileOf(profileName)
	if err != nil {
		return err
	}
	if _, dup := pr.members[id]; dup {
		return fmt.Errorf("action profile %s: member %d exists", pr.name, id)
	}
	if pr.max > 0 && len(pr.members) >= pr.max {
		return fmt.Errorf("action profile %s is full (%d members)", pr.name, pr.max)
	}
	m, err := pr.member(action, params)
	if err != nil {
		return err
	}
	pr.members[id] = m
	return nil
}

func (pr *profile) member(action string, params []uint64) (*member, error) {
	a := pr.actions[action]
	if a == nil {
		return nil, fmt.Errorf("action profile %s: %q is not an action of its tables", pr.name, action)
	}
	if err := a.check(params); err != nil {
		return nil, fmt.Errorf("action profile %s: %w", pr.name, err)
	}
	return &member{act: a, data: slices.Clone(params)}, nil
}

// ModifyMember changes the action and parameters of an existing member.
func (sw *Switch) ModifyMember(profileName string, id int, action string, params []uint64) error {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	pr, err := sw.profileOf(profileName)
	if err != nil {
		return err
	}
	old := pr.members[id]
	if old == nil {
		return fmt.Errorf("action profile %s: no member %d", pr.name, id)
	}
	m, err := pr.member(action, params)
	if err != nil {
		return err
	}
	*old = *m // groups and entries keep pointing at it by id
	return nil
}

// DeleteMember removes a member that no group holds. (Entries that point
// at it are the caller's to check: the profile does not know them.)
func (sw *Switch) DeleteMember(profileName string, id int) error {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	pr, err := sw.profileOf(profileName)
	if err != nil {
		return err
	}
	if pr.members[id] == nil {
		return fmt.Errorf("action profile %s: no member %d", pr.name, id)
	}
	for g, ids := range pr.groups {
		if slices.Contains(ids, id) {
			return fmt.Errorf("action profile %s: member %d is in group %d", pr.name, id, g)
		}
	}
	delete(pr.members, id)
	return nil
}

// DeleteGroup removes a group of an action selector.
func (sw *Switch) DeleteGroup(profileName string, id int) error {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	pr, err := sw.profileOf(profileName)
	if err != nil {
		return err
	}
	if _, ok := pr.groups[id]; !ok {
		return fmt.Errorf("action profile %s: no group %d", pr.name, id)
	}
	delete(pr.groups, id)
	return nil
}

// SetGroup sets the members of group id of an action selector.
func (sw *Switch) SetGroup(profileName string, id int, members []int) error {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	pr, err := sw.profileOf(profileName)
	if err != nil {
		return err
	}
	if pr.selector == nil {
		return fmt.Errorf("action profile %s has no selector: no groups", pr.name)
	}
	ids := slices.Clone(members)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	for _, m := range ids {
		if pr.members[m] == nil {
			return fmt.Errorf("action profile %s: group %d: no member %d", pr.name, id, m)
		}
	}
	pr.groups[id] = ids
	return nil
}
