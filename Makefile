# The checks CI runs, in order. `make test` is the README's test command.
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2

.PHONY: test fmt vet staticcheck gotest

test: fmt vet staticcheck gotest

fmt:
	@out=$$(gofmt -l .); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	go vet ./...

staticcheck:
	go run $(STATICCHECK) ./...

gotest:
	go test -race -count=1 ./...
