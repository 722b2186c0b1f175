package buffercalc

// Input is one switch to analyse.
type Input struct {
	Name       string // what the report calls the switch (a preset name, say)
	Size       float64
	Ports      int
	Priorities int
	Link       Link
	// Headroom is t_flight when given; zero computes it from Link.
	Headroom float64
	// Beta selects dynamic thresholds; zero analyses static ones only.
	Beta float64
	// ECN is a marking threshold (Kmin) to check against the bounds; zero
	// checks none.
	ECN float64
}

// Amount is a byte count with its KB figure rounded down to 0.01 KB, the
// way a bound is printed.
type Amount struct {
	Bytes float64 `json:"bytes"`
	KB    float64 `json:"kb"`
}

func amount(b float64) Amount { return Amount{Bytes: b, KB: FloorKB(b)} }

// Analysis is every threshold of section 4 for one switch, with what binds
// each one.
type Analysis struct {
	Switch   SwitchSummary   `json:"switch"`
	Headroom HeadroomReport  `json:"headroom"`
	Static   StaticReport    `json:"static"`
	Dynamic  *DynamicReport  `json:"dynamic,omitempty"`
	Sweep    []DynamicReport `json:"beta_sweep"`
	// MinBeta is the smallest beta giving a t_ECN bound of one MTU, and
	// MinStandardBeta the smallest of StandardBetas that does; zero when
	// none does.
	MinBeta         float64   `json:"min_beta_for_one_mtu_ecn"`
	MinStandardBeta float64   `json:"min_standard_beta_for_one_mtu_ecn"`
	ECNCheck        *ECNCheck `json:"ecn_check,omitempty"`
}

// SwitchSummary echoes the inputs.
type SwitchSummary struct {
	Name       string  `json:"name"`
	Ports      int     `json:"ports"`
	RateBps    float64 `json:"port_rate_bps"`
	Buffer     float64 `json:"buffer_bytes"`
	Priorities int     `json:"lossless_priorities"`
	MTU        float64 `json:"mtu_bytes"`
}

// HeadroomReport is t_flight: the value used, and the link model's itemised
// figure beside it.
type HeadroomReport struct {
	Used   Amount   `json:"used"`
	Given  bool     `json:"given"` // Used was given rather than modelled
	Model  Headroom `json:"model"`
	Cable  float64  `json:"cable_m"`
	Fitted *float64 `json:"cable_m_for_used,omitempty"` // cable length at which the model reaches a given headroom
	// Reserved is p n t_flight, the headroom of the whole switch.
	Reserved Amount `json:"reserved"`
}

// StaticReport holds the static thresholds and their feasibility.
type StaticReport struct {
	XOFF Amount `json:"t_pfc"`
	XON  Amount `json:"xon"`
	ECN  Amount `json:"t_ecn_bound"`
	// ECNFeasible is false when the ECN bound is under one MTU: marking
	// could not start before PFC in the worst case.
	ECNFeasible bool `json:"t_ecn_feasible"`
	// XONFeasible is false when t_PFC is under two MTU, leaving no room
	// for the RESUME hysteresis.
	XONFeasible bool `json:"xon_feasible"`
}

// DynamicReport holds the dynamic thresholds for one beta.
type DynamicReport struct {
	Beta        float64 `json:"beta"`
	XOFFEmpty   Amount  `json:"t_pfc_empty_buffer"`
	XOFFAtECN   Amount  `json:"t_pfc_worst_case"`
	ECN         Amount  `json:"t_ecn_bound"`
	ECNFeasible bool    `json:"t_ecn_feasible"`
}

// ECNCheck says whether a given marking threshold keeps ECN ahead of PFC.
type ECNCheck struct {
	Threshold Amount `json:"threshold"`
	Static    bool   `json:"ok_static"`
	Dynamic   *bool  `json:"ok_dynamic,omitempty"`
}

// Analyze computes everything for one switch.
func Analyze(in Input) (Analysis, error) {
	if err := in.Link.Validate(); err != nil {
		return Analysis{}, err
	}
	switch {
	case in.Headroom < 0:
		return Analysis{}, fieldErr("headroom", "must be greater than zero, got %g B", in.Headroom)
	case in.Beta < 0:
		return Analysis{}, fieldErr("beta", "must be greater than zero, got %g", in.Beta)
	case in.ECN < 0:
		return Analysis{}, fieldErr("ecn", "must be greater than zero, got %g B", in.ECN)
	}
	model, err := in.Link.Headroom()
	if err != nil {
		return Analysis{}, err
	}
	hr := HeadroomReport{Model: model, Cable: in.Link.CableMeters, Used: amount(model.Total)}
	if in.Headroom > 0 {
		hr.Used, hr.Given = amount(in.Headroom), true
		if m, ok := in.Link.CableFor(in.Headroom); ok {
			hr.Fitted = &m
		}
	}
	buf := Buffer{Size: in.Size, Ports: in.Ports, Priorities: in.Priorities, Headroom: hr.Used.Bytes, MTU: in.Link.MTU}
	if err := buf.Validate(); err != nil {
		if fe, ok := err.(*FieldError); ok && fe.Field == "headroom" && !hr.Given {
			// The modelled headroom is no flag of its own: say what it came from.
			return Analysis{}, fieldErr("headroom", "the link model gives %s per port per priority (%s, %g m cable); %s",
				FormatSize(model.Total), FormatRate(in.Link.Rate), in.Link.CableMeters, fe.Msg)
		}
		return Analysis{}, err
	}
	hr.Reserved = amount(buf.Reserved())

	st := buf.Static()
	a := Analysis{
		Switch: SwitchSummary{Name: in.Name, Ports: in.Ports, RateBps: in.Link.Rate, Buffer: in.Size,
			Priorities: in.Priorities, MTU: in.Link.MTU},
		Headroom: hr,
		Static: StaticReport{XOFF: amount(st.XOFF), XON: amount(st.XON), ECN: amount(st.ECN),
			ECNFeasible: st.ECN >= buf.MTU, XONFeasible: st.XON > 0},
	}
	dyn := func(beta float64) DynamicReport {
		d := buf.Dynamic(beta)
		return DynamicReport{Beta: beta, XOFFEmpty: amount(d.XOFFEmpty), XOFFAtECN: amount(d.XOFFAtECN),
			ECN: amount(d.ECN), ECNFeasible: d.ECN >= buf.MTU}
	}
	for _, b := range StandardBetas {
		r := dyn(b)
		a.Sweep = append(a.Sweep, r)
		if r.ECNFeasible && a.MinStandardBeta == 0 {
			a.MinStandardBeta = b
		}
	}
	if b, ok := buf.MinBetaForECN(buf.MTU); ok {
		a.MinBeta = b
	}
	if in.Beta > 0 {
		r := dyn(in.Beta)
		a.Dynamic = &r
	}
	if in.ECN > 0 {
		c := &ECNCheck{Threshold: amount(in.ECN), Static: in.ECN < st.ECN}
		if a.Dynamic != nil {
			ok := in.ECN < buf.Dynamic(in.Beta).ECN
			c.Dynamic = &ok
		}
		a.ECNCheck = c
	}
	return a, nil
}
