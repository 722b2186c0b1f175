# The checks CI runs, in order. `make test` is the README's test command.
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2

.PHONY: test fmt vet staticcheck gotest bench

test: fmt vet staticcheck gotest

fmt:
	@out=$$(gofmt -l .); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	go vet ./...

staticcheck:
	go run $(STATICCHECK) ./...

# Two passes: every test under the race detector, except the long
# single-goroutine simulations (internal/race), which the second pass runs
# without it; the detector would cost them five to ten times the time.
# The end-to-end emulations (./test) run last, alone: they time real
# packets, and share the machine's two cores with nothing else.
# The long simulations get 30 minutes a package rather than go test's 10:
# the RCM paper's tests in sim/scenario take under 2 minutes on an idle
# 2-core machine, but a busy one can take several times that.
# Then ten seconds of fuzzed frames through the Go P4 target's parser and
# ten of fuzzed Write requests at its P4Runtime server, ten of fuzzed
# large Write requests through its parallel decoder, ten of fuzzed
# frames through the host agents' RoCEv2 reader, and ten of fuzzed frames
# through the Go target's generated code beside its interpreter.
gotest:
	go test -race -count=1 $$(go list ./... | grep -v '/test$$')
	go test -count=1 -timeout 30m $$(go list ./... | grep -v '/test$$')
	go test -count=1 -timeout 30m ./test
	go test -run '^$$' -fuzz '^FuzzProcess$$' -fuzztime 10s ./v1model
	go test -run '^$$' -fuzz '^FuzzWrite$$' -fuzztime 10s ./p4rt
	go test -run '^$$' -fuzz '^FuzzWriteCodec$$' -fuzztime 10s ./p4rt
	go test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime 10s ./roce
	go test -run '^$$' -fuzz '^FuzzGeneratedMatchesInterpreted$$' -fuzztime 10s ./v1model

# Every benchmark of BENCHMARKS.md, which it rewrites (as root: the
# switch rig and the emulation use network namespaces). AREA=sim,target
# measures those areas alone; NS3=DIR runs the ns-3 RDMA simulator built
# in DIR beside p4rcm. See docs/develop.md.
bench:
	go run ./internal/benchtable $(if $(AREA),-area $(AREA)) $(if $(NS3),-ns3 $(NS3)) -log p4rcm-out/bench
