package v1model

import (
	"fmt"
	"maps"
	"slices"

	"github.com/p4rcm/p4rcm/v1model/bmjson"
)

// node is one step of a control: a table, a conditional or a lone action
// call.
type node struct {
	name  string
	table *Table
	cond  func(p *packet) int64
	ce    *expr    // cond's expression, for the generator
	test  *cmpLeaf // cond as one comparison of leaves, tested inline
	// tests, any: cond as comparisons of leaves that must all hold
	// (any: one of them), tested inline.
	tests []cmpLeaf
	any   bool
	konst bool // cond is the constant k
	k     int64
	t, f  *node
	call  *action
	next  *node
	// block, for a call, is its action's body and those of the calls
	// that follow it up to the next table or conditional, as one list
	// of primitives; after is where the chain ends. Most of a p4c
	// program's nodes are such calls (keyless tables, below), so a
	// packet runs a few long lists instead of a table, an action and
	// a loop per statement.
	block []op
	after *node
}

// control is a compiled pipeline (ingress or egress).
type control struct {
	name  string
	start *node
	// gen, when set, is the control as generated code (gen.go), run
	// with g instead of walking the nodes.
	gen genControl
	g   *genState
}

// run applies the control to the packet; exit ends it.
func (ctl *control) run(p *packet) {
	if ctl.gen != nil {
		ctl.gen(p, ctl.g)
		p.exited = false
		return
	}
	n := ctl.start
	for n != nil && !p.exited {
		switch {
		case n.block != nil:
			p.adata = nil // the block's actions take no parameters
			runOps(n.block, p)
			n = n.after
		case n.table != nil:
			n = n.table.apply(p)
		case n.test != nil:
			if n.test.test(p) {
				n = n.t
			} else {
				n = n.f
			}
		case n.tests != nil:
			if testChain(n.tests, n.any, p) {
				n = n.t
			} else {
				n = n.f
			}
		case n.cond != nil:
			if n.cond(p) != 0 {
				n = n.t
			} else {
				n = n.f
			}
		default:
			p.adata = nil
			n.call.run(p)
			n = n.next
		}
	}
	p.exited = false
}

func (c *compiler) compileControl(bp *bmjson.Pipeline) (*control, error) {
	nodes := map[string]*node{}
	add := func(name string, n *node) error {
		if nodes[name] != nil {
			return fmt.Errorf("pipeline %q: two nodes named %q", bp.Name, name)
		}
		n.name = name
		nodes[name] = n
		return nil
	}
	for i := range bp.ActionProfiles {
		pr, err := c.compileProfile(&bp.ActionProfiles[i])
		if err != nil {
			return nil, err
		}
		c.sw.profiles[pr.name] = pr
	}
	for i := range bp.Tables {
		t, err := c.compileTable(&bp.Tables[i])
		if err != nil {
			return nil, err
		}
		if c.sw.tables[t.Name] != nil {
			return nil, fmt.Errorf("table %q defined twice", t.Name)
		}
		c.sw.tables[t.Name] = t
		c.sw.tableList = append(c.sw.tableList, t)
		if err := add(t.Name, &node{table: t}); err != nil {
			return nil, err
		}
	}
	for i := range bp.Conditionals {
		bc := &bp.Conditionals[i]
		c.where = fmt.Sprintf("conditional %q", bc.Name)
		if s := bc.Source.String(); s != "" {
			c.where += " at " + s
		}
		e, err := c.compileValue(&bc.Expression)
		if err != nil {
			return nil, c.errorf("%v", err)
		}
		n := &node{cond: e.eval, ce: &e, konst: e.konst, k: e.k}
		switch {
		case e.konst:
		case len(e.cmps) == 1:
			n.test = &e.cmps[0]
		case len(e.cmps) > 1:
			n.tests, n.any = e.cmps, e.any
		}
		if err := add(bc.Name, n); err != nil {
			return nil, err
		}
	}
	for i := range bp.ActionCalls {
		ac := &bp.ActionCalls[i]
		a := c.sw.actionByID[ac.ActionID]
		if a == nil {
			return nil, fmt.Errorf("pipeline %q: action call %q: unknown action id %d", bp.Name, ac.Name, ac.ActionID)
		}
		if len(a.params) > 0 {
			return nil, fmt.Errorf("pipeline %q: action call %q: action %q takes parameters", bp.Name, ac.Name, a.name)
		}
		if err := add(ac.Name, &node{call: a}); err != nil {
			return nil, err
		}
	}
	ref := func(from string, name *string) (*node, error) {
		if name == nil {
			return nil, nil
		}
		n := nodes[*name]
		if n == nil {
			return nil, fmt.Errorf("pipeline %q: %s names unknown node %q", bp.Name, from, *name)
		}
		return n, nil
	}
	var err error
	for i := range bp.Tables {
		bt := &bp.Tables[i]
		t := c.sw.tables[bt.Name]
		if t.baseNext, err = ref("table "+bt.Name, bt.BaseDefaultNext); err != nil {
			return nil, err
		}
		t.nextAct, t.nextNode = nil, nil
		// In the order of the actions' names, not the map's: the
		// generated code (gen.go) follows this order.
		for _, k := range slices.Sorted(maps.Keys(bt.NextTables)) {
			n, err := ref("table "+bt.Name+" next_tables", bt.NextTables[k])
			if err != nil {
				return nil, err
			}
			switch k {
			case "__HIT__":
				t.hit, t.hitMiss = n, true
			case "__MISS__":
				t.miss, t.hitMiss = n, true
			default:
				if t.actions[k] == nil {
					return nil, fmt.Errorf("pipeline %q: table %s: next_tables names %q, not one of its actions", bp.Name, bt.Name, k)
				}
				t.nextAct = append(t.nextAct, t.actions[k])
				t.nextNode = append(t.nextNode, n)
			}
		}
	}
	for i := range bp.Conditionals {
		bc := &bp.Conditionals[i]
		n := nodes[bc.Name]
		if n.t, err = ref("conditional "+bc.Name, bc.TrueNext); err != nil {
			return nil, err
		}
		if n.f, err = ref("conditional "+bc.Name, bc.FalseNext); err != nil {
			return nil, err
		}
	}
	for i := range bp.ActionCalls {
		ac := &bp.ActionCalls[i]
		if nodes[ac.Name].next, err = ref("action call "+ac.Name, ac.Next); err != nil {
			return nil, err
		}
	}
	start, err := ref("init_table", bp.InitTable)
	if err != nil {
		return nil, err
	}
	// A conditional whose condition is a constant is decided here: every
	// reference to it goes to the branch it always takes.
	for _, n := range nodes {
		if n.table != nil {
			n.table.baseNext, n.table.hit, n.table.miss = decided(n.table.baseNext), decided(n.table.hit), decided(n.table.miss)
			for i := range n.table.nextNode {
				n.table.nextNode[i] = decided(n.table.nextNode[i])
			}
		}
		n.t, n.f, n.next = decided(n.t), decided(n.f), decided(n.next)
	}
	for _, n := range nodes {
		keylessToCall(n)
	}
	for _, n := range nodes {
		n.block, n.after = chain(n)
	}
	return &control{name: bp.Name, start: decided(start)}, nil
}

// keylessToCall makes a table without a key, whose default action the
// program fixes (const), without parameters, counters or meters, a call
// of that action: such a table always misses, and the control plane
// cannot change what it runs. p4c makes one of every statement outside a
// table.
func keylessToCall(n *node) {
	t := n.table
	if t == nil || len(t.keys) > 0 || !t.defConst || t.deflt == nil || len(t.deflt.widths) > 0 ||
		t.counters || t.meter != nil || t.profile != nil {
		return
	}
	next := t.after(t.deflt)
	if t.hitMiss {
		next = t.miss
	}
	n.table, n.call, n.next = nil, t.deflt, next
}

// chain is the primitives of the calls from n on, up to the first node
// that is not a call of a straight-line action without parameters, and
// that node; nil for a node that is not such a call. The primitives a
// block runs without a call (op) are in the list as themselves: p4c's
// temporaries make most of a program's statements such copies.
func chain(n *node) ([]op, *node) {
	var block []op
	for i := 0; n != nil && n.call != nil && n.call.prims != nil && len(n.call.widths) == 0; i++ {
		if i == 1<<10 { // a bound: a bad JSON's calls may loop
			break
		}
		for j, f := range n.call.prims {
			if o := n.call.ops[j]; o != nil {
				block = append(block, *o)
				continue
			}
			block = append(block, op{kind: opCall, f: f})
		}
		n = n.next
	}
	if block == nil {
		return nil, nil
	}
	return block, n
}

// decided is n, or where n leads when it is a conditional on a constant
// (and so on, through a chain of them).
func decided(n *node) *node {
	for range 1 << 16 { // a bound: the graph is acyclic, but a bad JSON need not be
		if n == nil || n.cond == nil || !n.konst {
			return n
		}
		if n.k != 0 {
			n = n.t
		} else {
			n = n.f
		}
	}
	return n
}

// testChain is whether all of cs hold (any: one of them).
func testChain(cs []cmpLeaf, any bool, p *packet) bool {
	for i := range cs {
		if cs[i].test(p) == any {
			return any
		}
	}
	return !any
}
