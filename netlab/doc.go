// Package netlab builds small, real network labs on Linux for testing a
// software switch: one network namespace per emulated host, veth pairs that
// connect each host to the root namespace (where a software switch such as
// BMv2 runs and attaches to the switch-side ends), and AF_PACKET sockets to
// send and capture raw Ethernet frames on either end.
//
// A typical test:
//
//	if err := netlab.Available(); err != nil {
//		t.Skip(err)
//	}
//	lab, err := netlab.New("sw")
//	...
//	t.Cleanup(func() { lab.Close() })
//	h1, _ := lab.Host("h1")
//	l1, _ := lab.Link(h1, "eth0", nil) // l1.SwitchIf is the port for the switch
//	s1, _ := h1.Socket("eth0")
//	s1.Send(frame)
//	got, err := s1.Recv(time.Second) // errors.Is(err, netlab.ErrTimeout) if nothing came
//
// Everything a Lab creates carries the lab's name and a random suffix, so
// concurrent labs (parallel tests, several test binaries) never clash, and
// Close deletes exactly what the lab created and nothing else.
//
// # Namespaces and goroutines
//
// A network namespace belongs to an OS thread, not to a goroutine, and the
// Go scheduler moves goroutines between threads freely. The package therefore
// never switches the namespace of a thread that other goroutines may later
// run on: each piece of work that must happen "inside" a namespace (creating
// the namespace, writing its sysctls, opening a socket there) runs on a fresh
// goroutine that locks its thread, switches namespace and exits without
// unlocking, which makes the runtime throw that thread away instead of
// reusing it. Objects created that way keep their namespace afterwards:
// netlink handles and AF_PACKET sockets are bound to the namespace they were
// created in, so they can be used from any goroutine.
//
// The package is Linux-only and needs CAP_SYS_ADMIN (namespaces and bind
// mounts), CAP_NET_ADMIN (links) and CAP_NET_RAW (packet sockets); in practice
// it runs as root. Available reports why a lab cannot be built.
package netlab
