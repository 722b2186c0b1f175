package p4rt

import (
	"crypto/sha256"
	"testing"

	"github.com/p4rcm/p4rcm/p4"
	"github.com/p4rcm/p4rcm/v1model"
)

// TestDecodedOnce holds the cache of decoded programs to its contract:
// the same bytes give the same document, other bytes another, a bad
// document an error that is not kept, and no more than max documents
// are kept, the oldest dropped first.
func TestDecodedOnce(t *testing.T) {
	js := p4.DeviceConfig()
	c := docCache{max: 2}
	a, _, err := c.decode(js)
	if err != nil {
		t.Fatal(err)
	}
	if b, _, err := c.decode(append([]byte(nil), js...)); err != nil || b != a {
		t.Errorf("the same bytes again: %p, %v; want the document decoded first, %p", b, err, a)
	}
	other := append(append([]byte(nil), js...), '\n')
	b, _, err := c.decode(other)
	if err != nil {
		t.Fatal(err)
	}
	if b == a {
		t.Error("other bytes gave the document of the first")
	}
	for range 2 {
		if _, _, err := c.decode([]byte(`{"header_types": 1}`)); err == nil {
			t.Error("a bad document decoded without an error")
		}
	}
	if len(c.docs) != 2 || len(c.order) != 2 {
		t.Errorf("after two good documents and a bad one the cache holds %d (%d in order), want 2", len(c.docs), len(c.order))
	}
	if _, _, err := c.decode(append(append([]byte(nil), js...), ' ')); err != nil {
		t.Fatal(err)
	}
	if again, _, _ := c.decode(other); again != b {
		t.Error("the second document was dropped instead of the oldest")
	}
	if again, _, _ := c.decode(js); again == a {
		t.Error("a third document did not drop the oldest of two")
	}
}

// A pipeline's program is decoded through the cache, and two pipelines
// set with the same program share its document and nothing else: each
// has its own switch.
func TestPipelinesShareTheDocumentOnly(t *testing.T) {
	info, err := p4.P4Info()
	if err != nil {
		t.Fatal(err)
	}
	js := append(append([]byte(nil), p4.DeviceConfig()...), "\n\n"...) // bytes no other test sets
	p1, err := newPipeline(info, js, nil, v1model.Config{})
	if err != nil {
		t.Fatal(err)
	}
	cached := decoded.cached(js)
	if cached == nil || cached.doc == nil {
		t.Fatal("newPipeline did not keep the program's decoded document")
	}
	p2, err := newPipeline(info, append([]byte(nil), js...), nil, v1model.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if p1.sw == p2.sw {
		t.Fatal("two pipelines share a switch")
	}
	if again, _, _ := decoded.decode(js); again != cached.doc {
		t.Error("the second pipeline decoded the program again")
	}
}

// cached is the cache's entry for js, nil if it has none.
func (c *docCache) cached(js []byte) *cachedDoc {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.docs[sha256.Sum256(js)]
}
