package v1model

import "testing"

func TestLoadRCM(t *testing.T) {
	sw, err := Load("../p4/build/rcm.json", Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(sw.Tables())
}
