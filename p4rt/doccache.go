package p4rt

import (
	"crypto/sha256"
	"sync"

	"github.com/p4rcm/p4rcm/v1model"
	"github.com/p4rcm/p4rcm/v1model/bmjson"
)

// decoded holds the BMv2 JSON documents this process decoded last, by
// the SHA-256 of their bytes, each with the expression trees its first
// compile parsed. The switches of a group (p4switch --group, every switch
// of an emulated fabric in one process) are all given the same program,
// and decoding rcm.json is half of compiling it, parsing its expressions
// a sixth: with both shared, a fabric's first apply does them once per
// process instead of once per switch. v1model.New only reads a document
// (TestSharedDocument), so the switches compiled from one share it.
var decoded = docCache{max: 4}

// docCache is a small cache of decoded documents; at most max, the
// oldest dropped first.
type docCache struct {
	mu    sync.Mutex
	max   int
	docs  map[[sha256.Size]byte]*cachedDoc
	order [][sha256.Size]byte // oldest first
}

// cachedDoc is one document, decoded once however many callers want it
// at the same time.
type cachedDoc struct {
	once  sync.Once
	doc   *bmjson.Document
	trees *v1model.Trees
	err   error
}

// decode is bmjson.Decode(js), from the cache where the same bytes were
// decoded before, and the Trees to compile it with. The document must not
// be changed.
func (c *docCache) decode(js []byte) (*bmjson.Document, *v1model.Trees, error) {
	key := sha256.Sum256(js)
	c.mu.Lock()
	d := c.docs[key]
	if d == nil {
		if c.docs == nil {
			c.docs = map[[sha256.Size]byte]*cachedDoc{}
		}
		d = &cachedDoc{}
		c.docs[key] = d
		c.order = append(c.order, key)
	}
	c.mu.Unlock()
	d.once.Do(func() { d.doc, d.err = bmjson.Decode(js); d.trees = &v1model.Trees{} })
	if d.err != nil {
		// A bad document is not kept: it would only take the room of a
		// good one, and decoding it again finds the same error.
		c.forget(key, d)
	} else {
		c.trim()
	}
	return d.doc, d.trees, d.err
}

// trim drops the oldest documents past max.
func (c *docCache) trim() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(c.order) > c.max {
		delete(c.docs, c.order[0])
		c.order = c.order[1:]
	}
}

// forget drops the document under key if it is still d.
func (c *docCache) forget(key [sha256.Size]byte, d *cachedDoc) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.docs[key] != d {
		return
	}
	delete(c.docs, key)
	for i, k := range c.order {
		if k == key {
			c.order = append(c.order[:i], c.order[i+1:]...)
			break
		}
	}
}
