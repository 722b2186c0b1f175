package p4switch

import (
	"context"
	"sync"

	"github.com/p4rcm/p4rcm/v1model"
)

// datapath is the switch the ports feed, which a pipeline committed over
// P4Runtime replaces, and the traffic-manager settings (queue rates and
// depths, from the flags and the control socket) that every switch gets,
// as BMv2's traffic manager keeps them across pipeline changes.
type datapath struct {
	// emitFor makes a switch's Emit: it hands on, with each frame, how
	// late the switch's link delivered it (v1model's EmitLateness).
	emitFor func(*v1model.Switch) v1model.Emit
	idle    func()

	mu       sync.Mutex
	sw       *v1model.Switch
	emit     v1model.Emit // sw's
	settings []func(*v1model.Switch) error
	stop     context.CancelFunc
	served   sync.WaitGroup
}

// current is the running switch, nil before the first pipeline.
func (d *datapath) current() *v1model.Switch {
	sw, _ := d.running()
	return sw
}

// running is the running switch and its Emit, nil before the first
// pipeline.
func (d *datapath) running() (*v1model.Switch, v1model.Emit) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.sw, d.emit
}

// setting applies a traffic-manager setting to the running switch and
// remembers it for the next ones.
func (d *datapath) setting(f func(*v1model.Switch) error) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.sw != nil {
		if err := f(d.sw); err != nil {
			return err
		}
	}
	d.settings = append(d.settings, f)
	return nil
}

// replace makes sw the running switch: the settings applied, its
// traffic manager served, the previous one's stopped (packets queued in
// it are lost, as on BMv2 when a pipeline is swapped).
func (d *datapath) replace(ctx context.Context, sw *v1model.Switch) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, f := range d.settings {
		_ = f(sw) // checked when first given
	}
	if d.stop != nil {
		d.stop()
		d.served.Wait()
	}
	sctx, stop := context.WithCancel(ctx)
	emit := d.emitFor(sw)
	d.sw, d.emit, d.stop = sw, emit, stop
	d.served.Add(1)
	go func() {
		defer d.served.Done()
		_ = sw.Serve(sctx, emit, d.idle)
	}()
}

// close stops the running switch's traffic manager.
func (d *datapath) close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.stop != nil {
		d.stop()
	}
	d.served.Wait()
}
