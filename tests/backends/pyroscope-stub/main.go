// pyroscope-stub: a stand-in for a Grafana Pyroscope server in pyebpf's
// integration tests. The real server cannot be built here (its main module is
// not served by the Go module proxy, and it is AGPL), but its API module
// (Apache-2.0) is: it holds the generated protobuf types and Connect handlers,
// so this stub speaks the real wire protocol (Connect unary over HTTP/1.1 or
// h2c, application/proto and application/json, gzip request bodies; gRPC too
// over h2c) and only the server-side behaviour is re-implemented here, after
// Pyroscope's distributor (pkg/distributor, pkg/validation,
// pkg/model/pprofsplit) and querier as read in its source.
//
// Endpoints (all on one port):
//
//	POST /push.v1.PusherService/Push
//	POST /querier.v1.QuerierService/{SelectMergeProfile,SelectMergeSpanProfile,ProfileTypes,LabelValues,LabelNames}
//	GET  /ready
//	POST /stub/fail?status=S&count=N[&retry_after=SECONDS][&plain=1]
//	POST /stub/delay?ms=M&count=N
//	POST /stub/reset
//	GET  /stub/stats
//	GET  /stub/totals?type=ID[&selector={a="b"}][&start=MS&end=MS][&tenant=T][&spans=ID,ID]
//	GET  /stub/pprof?(the same): the merged profile as gzipped pprof
package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/signal"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"connectrpc.com/connect"
	"github.com/google/pprof/profile"
	googlev1 "github.com/grafana/pyroscope/api/gen/proto/go/google/v1"
	pushv1 "github.com/grafana/pyroscope/api/gen/proto/go/push/v1"
	"github.com/grafana/pyroscope/api/gen/proto/go/push/v1/pushv1connect"
	querierv1 "github.com/grafana/pyroscope/api/gen/proto/go/querier/v1"
	"github.com/grafana/pyroscope/api/gen/proto/go/querier/v1/querierv1connect"
	typesv1 "github.com/grafana/pyroscope/api/gen/proto/go/types/v1"
	"google.golang.org/protobuf/proto"
)

// Pyroscope's default limits (pkg/validation/limits.go).
const (
	maxLabelNamesPerSeries = 30
	maxLabelNameLength     = 1024
	maxLabelValueLength    = 2048
	maxProfileSizeBytes    = 4 * 1024 * 1024
	maxSamples             = 16000
	maxSampleLabels        = 100
	maxStackDepth          = 1000
	defaultTenant          = "anonymous" // pkg/tenant: the tenant when multitenancy is off
)

var (
	addr          = flag.String("addr", "127.0.0.1:4040", "listen address")
	rejectOlder   = flag.Duration("reject-older-than", time.Hour, "ingestion window: reject profiles older than this (0: off)")
	rejectNewer   = flag.Duration("reject-newer-than", 10*time.Minute, "ingestion window: reject profiles newer than now+this (0: off)")
	basicFile     = flag.String("basic-auth-file", "", "file holding user:pass; requests need that Basic auth")
	bearerFile    = flag.String("bearer-token-file", "", "file holding a token; requests need 'Authorization: Bearer TOKEN'")
	requireTenant = flag.Bool("require-tenant", false, "multitenancy on: X-Scope-OrgID required (else 401), data kept per tenant")
	storeCancel   = flag.Bool("store-cancelled", false, "store a push even when its client went away (Pyroscope's ingester write path)")
	settle        = flag.Duration("settle", 20*time.Millisecond, "wait before the store, like Pyroscope's hop to its writers (see Push)")
)

// Pyroscope's legacy metric-name rule; recent Pyroscope accepts any non-empty
// UTF-8 __name__, so this is stricter, on purpose: pyebpf's names must be
// valid for every Pyroscope version.
var metricNameRx = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`)

type labels []*typesv1.LabelPair

func (ls labels) get(n string) string {
	for _, l := range ls {
		if l.Name == n {
			return l.Value
		}
	}
	return ""
}

// String is Pyroscope's LabelPairsString.
func (ls labels) String() string {
	parts := make([]string, len(ls))
	for i, l := range ls {
		parts[i] = l.Name + "=" + strconv.Quote(l.Value)
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func (ls labels) sorted() labels {
	sort.SliceStable(ls, func(i, j int) bool { return ls[i].Name < ls[j].Name })
	return ls
}

// entry is one stored series of one pushed profile: the pprof with only the
// samples that pprofsplit put in that series.
type entry struct {
	tenant string
	labels labels
	timeMs int64
	seq    int64 // the pushed profile it comes from
	prof   *profile.Profile
}

type stats struct {
	Pushes           int64    `json:"pushes"`
	AcceptedProfiles int64    `json:"accepted_profiles"`
	Rejected         int64    `json:"rejected"`             // push requests answered non-2xx, whatever the cause
	RejectedProfiles int64    `json:"rejected_profiles"`    // profiles refused by validation or parsing
	DuplicateIDs     int64    `json:"duplicate_ids"`        // profiles whose RawSample.ID the Push handler saw before
	DupStoredIDs     int64    `json:"duplicate_stored_ids"` // stored profiles whose RawSample.ID was stored before
	EmptyProfiles    int64    `json:"empty_profiles"`       // accepted but nothing to store (no non-zero sample)
	Cancelled        int64    `json:"cancelled"`            // pushes whose client was gone before the store
	InjectedFailures int64    `json:"injected_failures"`
	GzipRequests     int64    `json:"gzip_requests"`
	LastUserAgent    string   `json:"last_user_agent"`
	Tenants          []string `json:"tenants"`
	StoredSeries     int      `json:"stored_series"`
}

type server struct {
	pushv1connect.UnimplementedPusherServiceHandler
	querierv1connect.UnimplementedQuerierServiceHandler

	basic, bearer string

	mu         sync.Mutex
	entries    []*entry
	seen       map[string]int // RawSample.ID -> times the Push handler decoded it
	stored     map[string]int // RawSample.ID -> times stored
	tenants    map[string]bool
	st         stats
	failStatus int
	failCount  int
	failRetry  string
	failPlain  bool
	delay      time.Duration
	delayCount int
}

type tenantKey struct{}

func tenantOf(ctx context.Context) string {
	t, _ := ctx.Value(tenantKey{}).(string)
	return t
}

// interceptor: authentication (done by a gateway in front of Pyroscope, e.g.
// Grafana Cloud's) and the tenant, like pkg/tenant's interceptor: without
// multitenancy every request is tenant "anonymous"; with it, a missing
// X-Scope-OrgID is unauthenticated "no org id" (401).
func (s *server) interceptor() connect.UnaryInterceptorFunc {
	return func(next connect.UnaryFunc) connect.UnaryFunc {
		return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
			if !s.authorized(req.Header().Get("Authorization")) {
				return nil, connect.NewError(connect.CodeUnauthenticated, errors.New("invalid credentials"))
			}
			t := defaultTenant
			if *requireTenant {
				if t = req.Header().Get("X-Scope-OrgID"); t == "" {
					return nil, connect.NewError(connect.CodeUnauthenticated, errors.New("no org id"))
				}
			}
			return next(context.WithValue(ctx, tenantKey{}, t), req)
		}
	}
}

func (s *server) authorized(h string) bool {
	if s.basic == "" && s.bearer == "" {
		return true
	}
	eq := func(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }
	if v, ok := strings.CutPrefix(h, "Basic "); ok && s.basic != "" {
		dec, err := base64.StdEncoding.DecodeString(strings.TrimSpace(v))
		return err == nil && eq(string(dec), s.basic)
	}
	if v, ok := strings.CutPrefix(h, "Bearer "); ok && s.bearer != "" {
		return eq(strings.TrimSpace(v), s.bearer)
	}
	return false
}

func invalid(format string, a ...any) error {
	return connect.NewError(connect.CodeInvalidArgument, fmt.Errorf(format, a...))
}

// Push follows Distributor.Push/PushBatch/pushSeries: every RawSample is its
// own profile, handled independently; the valid ones are stored even when
// another one in the same request is refused, and the request then fails
// with the first refusal (400 invalid_argument). RawSample.ID is not used for
// deduplication (Pyroscope only logs it and stores under its own UUID).
func (s *server) Push(ctx context.Context, req *connect.Request[pushv1.PushRequest]) (*connect.Response[pushv1.PushResponse], error) {
	tenant := tenantOf(ctx)
	now := time.Now()
	type accepted struct {
		id      string
		entries []*entry
	}
	var ok []accepted
	var errs []error
	var ids []string
	n := 0
	for _, series := range req.Msg.Series {
		for _, raw := range series.Samples {
			n++
			ids = append(ids, raw.ID)
			es, err := ingest(tenant, series.Labels, raw.RawProfile, now)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			ok = append(ok, accepted{raw.ID, es})
		}
	}
	if n == 0 {
		return nil, invalid("no profiles received")
	}

	s.mu.Lock()
	var delay time.Duration
	if s.delayCount > 0 {
		s.delayCount--
		delay = s.delay
	}
	s.mu.Unlock()
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-ctx.Done():
		}
	}
	if *settle > 0 {
		time.Sleep(*settle)
	}
	// ASSUMPTION: Pyroscope ingests under the request's context. On its
	// segment-writer path the write is a call made with that context, so a
	// request whose client already went away is not stored and fails with
	// the context's error; that is what is done here. (On its older ingester
	// path the write is detached, context.WithoutCancel, and may be stored
	// all the same: -store-cancelled emulates that.) net/http cancels the
	// context only once its background read, started when the body has been
	// read to its end, sees the closed connection: a client that left just
	// before may still see its profile stored. In Pyroscope the store is a
	// call to another service, which takes a few ms, time enough for that
	// read to cancel it: -settle (20ms) stands for that hop, and makes the
	// outcome deterministic; -settle 0 leaves the race in.
	cancelled := ctx.Err()
	s.mu.Lock()
	if t := req.Header().Get("X-Scope-OrgID"); t != "" {
		s.tenants[t] = true // as sent, multitenancy on or off
	}
	for _, id := range ids {
		if id != "" {
			if s.seen[id]++; s.seen[id] > 1 {
				s.st.DuplicateIDs++
			}
		}
	}
	if cancelled != nil {
		s.st.Cancelled++
	}
	if cancelled == nil || *storeCancel {
		for _, a := range ok {
			s.st.AcceptedProfiles++
			if a.id != "" {
				if s.stored[a.id]++; s.stored[a.id] > 1 {
					s.st.DupStoredIDs++
				}
			}
			if len(a.entries) == 0 {
				s.st.EmptyProfiles++
			}
			for _, e := range a.entries {
				e.seq = s.st.AcceptedProfiles
			}
			s.entries = append(s.entries, a.entries...)
		}
	}
	s.st.RejectedProfiles += int64(len(errs))
	s.mu.Unlock()
	log.Printf("push tenant=%s ids=%q valid=%d refused=%d client_gone=%v stored=%v", tenant, ids, len(ok), len(errs), cancelled != nil, cancelled == nil || *storeCancel)
	if cancelled != nil {
		return nil, cancelled
	}
	if len(errs) > 0 {
		log.Printf("push refused: %v", errs[0])
		return nil, errs[0]
	}
	return connect.NewResponse(&pushv1.PushResponse{}), nil
}

// ingest validates one pushed pprof as the distributor does and splits it
// into series by its samples' string labels (pprofsplit).
func ingest(tenant string, in []*typesv1.LabelPair, raw []byte, now time.Time) ([]*entry, error) {
	sl := make(labels, 0, len(in)+1)
	for _, l := range in {
		sl = append(sl, &typesv1.LabelPair{Name: l.Name, Value: l.Value})
	}
	if sl.get("service_name") == "" {
		sl = append(sl, &typesv1.LabelPair{Name: "service_name", Value: "unknown_service"})
	}
	sl.sorted()

	// pprof.RawFromBytesWithLimit: gzip or not, 4 MiB decompressed at most.
	data := raw
	if len(raw) >= 2 && raw[0] == 0x1f && raw[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			return nil, invalid("%v", err)
		}
		if data, err = io.ReadAll(io.LimitReader(zr, maxProfileSizeBytes+1)); err != nil {
			return nil, invalid("copy to buffer: %v", err)
		}
	}
	if len(data) > maxProfileSizeBytes {
		return nil, invalid("uncompressed profile payload size exceeds limit of 4.2 MB")
	}
	if len(data) == 0 { // an empty message is an empty profile: accepted, nothing stored
		return nil, nil
	}
	// Stricter than Pyroscope's plain proto decoding: pprof's CheckValid
	// also refuses dangling or duplicate ids and value-count mismatches.
	p, err := profile.ParseUncompressed(data)
	if err == nil {
		err = p.CheckValid()
	}
	if err != nil {
		return nil, invalid("parsing profile: %v", err)
	}

	// validation.ValidateProfile
	if p.TimeNanos > 0 {
		t := time.Unix(0, p.TimeNanos).Truncate(time.Millisecond)
		from, to := now.Add(-*rejectOlder).Truncate(time.Millisecond), now.Add(*rejectNewer).Truncate(time.Millisecond)
		fmtT := func(t time.Time) string { return t.UTC().String() }
		var detail string
		switch {
		case *rejectNewer == 0:
			detail = "the ingestion window starts at " + fmtT(from)
		case *rejectOlder == 0:
			detail = "the ingestion window ends at " + fmtT(to)
		default:
			detail = "the ingestion window starts at " + fmtT(from) + " and ends at " + fmtT(to)
		}
		if (*rejectOlder != 0 && !t.After(from)) || (*rejectNewer != 0 && !t.Before(to)) {
			return nil, invalid("profile with labels '%s' is outside of ingestion window (profile timestamp: %s, %s)", sl, fmtT(t), detail)
		}
	} else {
		p.TimeNanos = now.UnixNano()
	}
	if len(p.Sample) > maxSamples {
		return nil, invalid("the profile with labels '%s' exceeds the samples count limit (max_profile_stacktrace_samples, actual: %d, limit: %d)", sl, len(p.Sample), maxSamples)
	}
	for _, s := range p.Sample {
		if len(s.Location) > maxStackDepth { // truncated, not refused: the leaf end goes
			s.Location = s.Location[len(s.Location)-maxStackDepth:]
		}
		if n := len(s.Label) + len(s.NumLabel); n > maxSampleLabels {
			return nil, invalid("the profile with labels '%s' exceeds the sample labels limit (max_profile_stacktrace_sample_labels, actual: %d, limit: %d)", sl, n, maxSampleLabels)
		}
	}
	for _, st := range p.SampleType {
		if strings.Contains(st.Type, "-") {
			return nil, invalid("sample type contains -")
		}
	}
	for _, f := range p.Function {
		for _, str := range []string{f.Name, f.SystemName, f.Filename} {
			if !utf8.ValidString(str) {
				return nil, invalid("invalid utf8 string hex: %x", str)
			}
		}
	}
	if p.PeriodType == nil {
		p.PeriodType = &profile.ValueType{}
	}

	// Normalize drops the samples whose values are all zero; a profile left
	// without samples is accepted and not stored.
	groups := map[string][]*profile.Sample{}
	var order []string
	for _, s := range p.Sample {
		zero := true
		for _, v := range s.Value {
			zero = zero && v == 0
		}
		if zero {
			continue
		}
		k := sampleLabelsKey(s)
		if _, seen := groups[k]; !seen {
			order = append(order, k)
		}
		groups[k] = append(groups[k], s)
	}
	var out []*entry
	for _, k := range order {
		samples := groups[k]
		ls := append(labels{}, sl...)
		// addSampleLabelsToLabelsBuilder: string labels only, the series' win.
		for _, name := range sortedKeys(samples[0].Label) {
			if v := samples[0].Label[name]; len(v) > 0 && ls.get(name) == "" && !splitIgnored[name] {
				ls = append(ls, &typesv1.LabelPair{Name: name, Value: v[0]})
			}
		}
		ls, err := validateLabels(ls.sorted())
		if err != nil {
			return nil, err
		}
		q := &profile.Profile{SampleType: p.SampleType, PeriodType: p.PeriodType, Period: p.Period,
			TimeNanos: p.TimeNanos, DurationNanos: p.DurationNanos, Sample: samples,
			Location: p.Location, Function: p.Function, Mapping: p.Mapping}
		out = append(out, &entry{tenant: tenant, labels: ls, timeMs: p.TimeNanos / 1e6, prof: q})
	}
	return out, nil
}

// Sample labels that pprofsplit keeps on the samples, not in the series.
var splitIgnored = map[string]bool{"trace_id": true, "span_id": true, "profile_id": true}

func sortedKeys(m map[string][]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func sampleLabelsKey(s *profile.Sample) string {
	var b strings.Builder
	for _, k := range sortedKeys(s.Label) {
		if !splitIgnored[k] && len(s.Label[k]) > 0 {
			fmt.Fprintf(&b, "%q=%q,", k, s.Label[k][0])
		}
	}
	return b.String()
}

// validateLabels is validation.ValidateLabels with the default limits; label
// names with dots are sanitized to underscores as Pyroscope does by default.
func validateLabels(ls labels) (labels, error) {
	if len(ls) > maxLabelNamesPerSeries {
		return nil, invalid("profile series '%s' has %d label names; limit %d", ls, len(ls), maxLabelNamesPerSeries)
	}
	if !metricNameRx.MatchString(ls.get("__name__")) {
		return nil, invalid("invalid labels '%s' with error: %s", ls, "invalid metric name")
	}
	for _, l := range ls {
		if len(l.Name) > maxLabelNameLength {
			return nil, invalid("profile with labels '%s' has label name too long: '%s'", ls, l.Name)
		}
		if len(l.Value) > maxLabelValueLength {
			return nil, invalid("profile with labels '%s' has label value too long: '%s'", ls, l.Value)
		}
		if n := strings.ReplaceAll(l.Name, ".", "_"); n != "" && metricNameRx.MatchString(n) && !strings.Contains(n, ":") {
			l.Name = n
		} else {
			return nil, invalid("invalid labels '%s' with error: %s", ls, "invalid label name '"+l.Name+"'")
		}
		if !utf8.ValidString(l.Value) {
			return nil, invalid("invalid labels '%s' with error: %s", ls, "invalid label value '"+l.Value+"'")
		}
	}
	ls.sorted()
	for i := 1; i < len(ls); i++ {
		if ls[i].Name == ls[i-1].Name {
			return nil, invalid("profile with labels '%s' has duplicate label name: '%s'", ls, ls[i].Name)
		}
	}
	return ls, nil
}

// --- reading back, as the querier does ---

type matcher struct {
	name, op, value string
	rx              *regexp.Regexp
}

func (m matcher) matches(ls labels) bool {
	v := ls.get(m.name)
	switch m.op {
	case "=":
		return v == m.value
	case "!=":
		return v != m.value
	case "=~":
		return m.rx.MatchString(v)
	default:
		return !m.rx.MatchString(v)
	}
}

var matcherRx = regexp.MustCompile(`^\s*([a-zA-Z_][a-zA-Z0-9_.]*)\s*(=~|!~|!=|=)\s*("(?:[^"\\]|\\.)*")\s*(?:,|$)`)

// parseSelector parses a PromQL-style {name="value", ...} selector.
func parseSelector(sel string) ([]matcher, error) {
	sel = strings.TrimSpace(sel)
	if sel == "" {
		return nil, nil
	}
	if !strings.HasPrefix(sel, "{") || !strings.HasSuffix(sel, "}") {
		return nil, fmt.Errorf("invalid label selector %q", sel)
	}
	rest := sel[1 : len(sel)-1]
	var ms []matcher
	for strings.TrimSpace(rest) != "" {
		g := matcherRx.FindStringSubmatch(rest)
		if g == nil {
			return nil, fmt.Errorf("invalid label selector %q", sel)
		}
		v, err := strconv.Unquote(g[3])
		if err != nil {
			return nil, fmt.Errorf("invalid label selector %q: %v", sel, err)
		}
		m := matcher{name: g[1], op: g[2], value: v}
		if m.op == "=~" || m.op == "!~" {
			if m.rx, err = regexp.Compile("^(?:" + v + ")$"); err != nil {
				return nil, fmt.Errorf("invalid label selector %q: %v", sel, err)
			}
		}
		ms = append(ms, m)
		rest = rest[len(g[0]):]
	}
	return ms, nil
}

func typeID(e *entry, i int) string {
	st, pt := e.prof.SampleType[i], e.prof.PeriodType
	return strings.Join([]string{e.labels.get("__name__"), st.Type, st.Unit, pt.Type, pt.Unit}, ":")
}

// selectEntries returns the matching entries and, for each, the index of the
// sample type asked for. An empty tenant matches every tenant; end 0 means
// no upper bound (only /stub/totals passes that).
func (s *server) selectEntries(tenant, typ string, ms []matcher, start, end int64) ([]*entry, []int) {
	if parts := strings.Split(typ, ":"); len(parts) == 6 { // the optional ":delta" suffix
		typ = strings.Join(parts[:5], ":")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var es []*entry
	var idx []int
next:
	for _, e := range s.entries {
		if (tenant != "" && e.tenant != tenant) || e.timeMs < start || (end != 0 && e.timeMs > end) {
			continue
		}
		for _, m := range ms {
			if !m.matches(e.labels) {
				continue next
			}
		}
		for i := range e.prof.SampleType {
			if typeID(e, i) == typ {
				es, idx = append(es, e), append(idx, i)
				break
			}
		}
	}
	return es, idx
}

// merge keeps one sample type per profile, drops sample labels (they are
// series labels now) and merges like Pyroscope's SelectMergeProfile: one
// sample type in the result. No max_nodes truncation.
func merge(typ string, es []*entry, idx []int) (*profile.Profile, error) {
	parts := append(strings.Split(typ, ":"), "", "", "", "", "")
	empty := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: parts[1], Unit: parts[2]}},
		PeriodType: &profile.ValueType{Type: parts[3], Unit: parts[4]},
	}
	srcs := []*profile.Profile{empty}
	for k, e := range es {
		p := e.prof
		q := &profile.Profile{
			SampleType: []*profile.ValueType{{Type: p.SampleType[idx[k]].Type, Unit: p.SampleType[idx[k]].Unit}},
			PeriodType: &profile.ValueType{Type: p.PeriodType.Type, Unit: p.PeriodType.Unit},
			Period:     p.Period, TimeNanos: p.TimeNanos, DurationNanos: p.DurationNanos,
			Location: p.Location, Function: p.Function, Mapping: p.Mapping,
		}
		for _, s := range p.Sample {
			q.Sample = append(q.Sample, &profile.Sample{Location: s.Location, Value: []int64{s.Value[idx[k]]}})
		}
		srcs = append(srcs, q)
	}
	return profile.Merge(srcs)
}

func toProto(p *profile.Profile) (*googlev1.Profile, error) {
	var buf bytes.Buffer
	if err := p.WriteUncompressed(&buf); err != nil {
		return nil, err
	}
	out := &googlev1.Profile{}
	return out, proto.Unmarshal(buf.Bytes(), out)
}

// query checks a querier request's type, selector and range as Pyroscope
// does, and returns the entries it selects (with the sample type's index).
func (s *server) query(ctx context.Context, typ, selector string, start, end int64) ([]*entry, []int, error) {
	if n := len(strings.Split(typ, ":")); n != 5 && n != 6 {
		return nil, nil, invalid("profile-type selection must be of the form <name>:<sample-type>:<sample-unit>:<period-type>:<period-unit>(:delta), got(%d): %q", n, typ)
	}
	ms, err := parseSelector(selector)
	if err != nil {
		return nil, nil, connect.NewError(connect.CodeInvalidArgument, err)
	}
	if end < start {
		return nil, nil, invalid("end must be after start")
	}
	// [start, end] as given: end 0 selects nothing recent, as in Pyroscope
	// (selectEntries reads 0 as unbounded, hence the 1).
	es, idx := s.selectEntries(tenantOf(ctx), typ, ms, start, max(end, 1))
	return es, idx, nil
}

func (s *server) SelectMergeProfile(ctx context.Context, req *connect.Request[querierv1.SelectMergeProfileRequest]) (*connect.Response[googlev1.Profile], error) {
	typ := req.Msg.ProfileTypeID
	es, idx, err := s.query(ctx, typ, req.Msg.LabelSelector, req.Msg.Start, req.Msg.End)
	if err != nil {
		return nil, err
	}
	p, err := merge(typ, es, idx)
	if err != nil {
		return nil, connect.NewError(connect.CodeInternal, err)
	}
	out, err := toProto(p)
	if err != nil {
		return nil, connect.NewError(connect.CodeInternal, err)
	}
	return connect.NewResponse(out), nil
}

// spanSet parses span ids as Pyroscope's span selector does: 16 hex digits
// each, read as the 8 bytes of a little-endian uint64 (pprof.Spans).
func spanSet(ids []string) (map[uint64]bool, error) {
	set := map[uint64]bool{}
	for _, id := range ids {
		b, err := hex.DecodeString(id)
		if err != nil || len(b) != 8 {
			return nil, invalid("invalid span id length: %q", id)
		}
		set[binary.LittleEndian.Uint64(b)] = true
	}
	return set, nil
}

// sampleSpan is a sample's span_id label as Pyroscope stores it at ingestion
// (0: none, or not 16 hex digits).
func sampleSpan(smp *profile.Sample) uint64 {
	for _, v := range smp.Label["span_id"] {
		if b, err := hex.DecodeString(v); err == nil && len(b) == 8 {
			return binary.LittleEndian.Uint64(b)
		}
	}
	return 0
}

// withSpans keeps only the samples of the given spans (nil: all).
func withSpans(es []*entry, set map[uint64]bool) []*entry {
	if set == nil {
		return es
	}
	out := make([]*entry, 0, len(es))
	for _, e := range es {
		q := *e.prof
		q.Sample = nil
		for _, smp := range e.prof.Sample {
			if set[sampleSpan(smp)] {
				q.Sample = append(q.Sample, smp)
			}
		}
		f := *e
		f.prof = &q
		out = append(out, &f)
	}
	return out
}

// flameGraph is a merged profile as Pyroscope's querier answers a flame graph:
// the names, and per level four numbers per bar (offset from the end of the
// bar before it on the level, total, self, name index), children by name.
func flameGraph(p *profile.Profile) *querierv1.FlameGraph {
	type node struct {
		name        string
		total, self int64
		kids        map[string]*node
	}
	root := &node{name: "total", kids: map[string]*node{}}
	for _, smp := range p.Sample {
		v := smp.Value[0]
		n := root
		n.total += v
		for i := len(smp.Location) - 1; i >= 0; i-- { // pprof: leaf first
			name := fmt.Sprintf("0x%x", smp.Location[i].Address)
			if ln := smp.Location[i].Line; len(ln) > 0 && ln[0].Function != nil {
				name = ln[0].Function.Name
			}
			k, ok := n.kids[name]
			if !ok {
				k = &node{name: name, kids: map[string]*node{}}
				n.kids[name] = k
			}
			k.total += v
			n = k
		}
		n.self += v
	}
	fg := &querierv1.FlameGraph{Total: root.total}
	index := map[string]int64{}
	nameOf := func(s string) int64 {
		if i, ok := index[s]; ok {
			return i
		}
		index[s] = int64(len(fg.Names))
		fg.Names = append(fg.Names, s)
		return index[s]
	}
	ends := []int64{} // per level, where its last bar ended
	var walk func(n *node, level int, at int64)
	walk = func(n *node, level int, at int64) {
		if level == len(fg.Levels) {
			fg.Levels = append(fg.Levels, &querierv1.Level{})
			ends = append(ends, 0)
		}
		fg.Levels[level].Values = append(fg.Levels[level].Values, at-ends[level], n.total, n.self, nameOf(n.name))
		ends[level] = at + n.total
		fg.MaxSelf = max(fg.MaxSelf, n.self)
		for _, k := range sortedMapKeys(n.kids) {
			walk(n.kids[k], level+1, at)
			at += n.kids[k].total
		}
	}
	walk(root, 0, 0)
	return fg
}

// SelectMergeSpanProfile is what Grafana's "profiles for this span" asks:
// the samples whose span_id is one of the span selector's, as a flame graph.
func (s *server) SelectMergeSpanProfile(ctx context.Context, req *connect.Request[querierv1.SelectMergeSpanProfileRequest]) (*connect.Response[querierv1.SelectMergeSpanProfileResponse], error) {
	typ := req.Msg.ProfileTypeID
	set, err := spanSet(req.Msg.SpanSelector)
	if err != nil {
		return nil, err
	}
	es, idx, err := s.query(ctx, typ, req.Msg.LabelSelector, req.Msg.Start, req.Msg.End)
	if err != nil {
		return nil, err
	}
	p, err := merge(typ, withSpans(es, set), idx)
	if err != nil {
		return nil, connect.NewError(connect.CodeInternal, err)
	}
	return connect.NewResponse(&querierv1.SelectMergeSpanProfileResponse{Flamegraph: flameGraph(p)}), nil
}

func (s *server) ProfileTypes(ctx context.Context, req *connect.Request[querierv1.ProfileTypesRequest]) (*connect.Response[querierv1.ProfileTypesResponse], error) {
	seen := map[string]*typesv1.ProfileType{}
	s.mu.Lock()
	for _, e := range s.entries {
		if e.tenant != tenantOf(ctx) || (req.Msg.End != 0 && (e.timeMs < req.Msg.Start || e.timeMs > req.Msg.End)) {
			continue
		}
		for i, st := range e.prof.SampleType {
			id := typeID(e, i)
			seen[id] = &typesv1.ProfileType{ID: id, Name: e.labels.get("__name__"), SampleType: st.Type, SampleUnit: st.Unit,
				PeriodType: e.prof.PeriodType.Type, PeriodUnit: e.prof.PeriodType.Unit}
		}
	}
	s.mu.Unlock()
	out := &querierv1.ProfileTypesResponse{}
	for _, id := range sortedMapKeys(seen) {
		out.ProfileTypes = append(out.ProfileTypes, seen[id])
	}
	return connect.NewResponse(out), nil
}

// labelIndex gathers label names (name == "") or the values of one label over
// the entries matching any of the selectors (all entries when none).
func (s *server) labelIndex(ctx context.Context, name string, sels []string, start, end int64) ([]string, error) {
	var alts [][]matcher
	for _, sel := range sels {
		ms, err := parseSelector(sel)
		if err != nil {
			return nil, connect.NewError(connect.CodeInvalidArgument, err)
		}
		alts = append(alts, ms)
	}
	if len(alts) == 0 {
		alts = [][]matcher{nil}
	}
	seen := map[string]bool{}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.entries {
		if e.tenant != tenantOf(ctx) || (end != 0 && (e.timeMs < start || e.timeMs > end)) {
			continue
		}
		for _, ms := range alts {
			all := true
			for _, m := range ms {
				all = all && m.matches(e.labels)
			}
			if !all {
				continue
			}
			for _, l := range e.labels {
				if name == "" {
					seen[l.Name] = true
				} else if l.Name == name {
					seen[l.Value] = true
				}
			}
		}
	}
	return sortedMapKeys(seen), nil
}

func (s *server) LabelValues(ctx context.Context, req *connect.Request[typesv1.LabelValuesRequest]) (*connect.Response[typesv1.LabelValuesResponse], error) {
	v, err := s.labelIndex(ctx, req.Msg.Name, req.Msg.Matchers, req.Msg.Start, req.Msg.End)
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&typesv1.LabelValuesResponse{Names: v}), nil
}

func (s *server) LabelNames(ctx context.Context, req *connect.Request[typesv1.LabelNamesRequest]) (*connect.Response[typesv1.LabelNamesResponse], error) {
	v, err := s.labelIndex(ctx, "", req.Msg.Matchers, req.Msg.Start, req.Msg.End)
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&typesv1.LabelNamesResponse{Names: v}), nil
}

func sortedMapKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// --- the stub's own HTTP endpoints ---

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// connectCodes: a Connect error code for an injected HTTP status, so that
// Connect clients see a well-formed error (the HTTP status is kept as given).
var connectCodes = map[int]string{400: "invalid_argument", 401: "unauthenticated", 403: "permission_denied",
	404: "not_found", 408: "deadline_exceeded", 409: "aborted", 413: "resource_exhausted", 429: "resource_exhausted",
	499: "canceled", 500: "internal", 501: "unimplemented", 502: "unavailable", 503: "unavailable", 504: "deadline_exceeded"}

type recorder struct {
	http.ResponseWriter
	code int
}

func (r *recorder) WriteHeader(c int) {
	if r.code == 0 {
		r.code = c
	}
	r.ResponseWriter.WriteHeader(c)
}
func (r *recorder) Write(b []byte) (int, error) {
	if r.code == 0 {
		r.code = 200
	}
	return r.ResponseWriter.Write(b)
}
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
func (r *recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// pushFront counts push requests and answers injected failures before the
// Connect handler sees them (like a proxy or an overloaded gateway would).
func (s *server) pushFront(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.st.Pushes++
		s.st.LastUserAgent = r.UserAgent()
		if strings.EqualFold(r.Header.Get("Content-Encoding"), "gzip") {
			s.st.GzipRequests++
		}
		status, retry, plain := 0, s.failRetry, s.failPlain
		if s.failCount > 0 {
			s.failCount--
			status = s.failStatus
			s.st.InjectedFailures++
			s.st.Rejected++
		}
		s.mu.Unlock()
		if status != 0 {
			_, _ = io.Copy(io.Discard, r.Body)
			if retry != "" {
				w.Header().Set("Retry-After", retry)
			}
			msg := fmt.Sprintf("injected failure: HTTP %d", status)
			log.Print(msg)
			if plain {
				w.Header().Set("Content-Type", "text/plain; charset=utf-8")
				w.WriteHeader(status)
				_, _ = io.WriteString(w, msg+"\n")
				return
			}
			code := connectCodes[status]
			if code == "" {
				code = "unknown"
			}
			writeJSON(w, status, map[string]string{"code": code, "message": msg})
			return
		}
		rec := &recorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		if rec.code >= 300 {
			log.Printf("push answered HTTP %d", rec.code)
			s.mu.Lock()
			s.st.Rejected++
			s.mu.Unlock()
		}
	})
}

func intParam(r *http.Request, name string, def int) (int, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	return strconv.Atoi(v)
}

func (s *server) stubFail(w http.ResponseWriter, r *http.Request) {
	status, err1 := intParam(r, "status", 0)
	count, err2 := intParam(r, "count", 1)
	retry := r.URL.Query().Get("retry_after")
	if err := errors.Join(err1, err2); err != nil || status < 200 || status > 599 || count < 0 {
		http.Error(w, "usage: POST /stub/fail?status=S&count=N[&retry_after=SECONDS][&plain=1]", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.failStatus, s.failCount, s.failRetry, s.failPlain = status, count, retry, r.URL.Query().Get("plain") == "1"
	s.mu.Unlock()
	writeJSON(w, 200, map[string]any{"status": status, "count": count, "retry_after": retry})
}

func (s *server) stubDelay(w http.ResponseWriter, r *http.Request) {
	ms, err1 := intParam(r, "ms", 0)
	count, err2 := intParam(r, "count", 1)
	if err := errors.Join(err1, err2); err != nil || ms < 0 || count < 0 {
		http.Error(w, "usage: POST /stub/delay?ms=M&count=N", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.delay, s.delayCount = time.Duration(ms)*time.Millisecond, count
	s.mu.Unlock()
	writeJSON(w, 200, map[string]any{"ms": ms, "count": count})
}

func (s *server) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.entries, s.seen, s.stored, s.tenants, s.st = nil, map[string]int{}, map[string]int{}, map[string]bool{}, stats{}
	s.failCount, s.delayCount = 0, 0
}

func (s *server) stubStats(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	st := s.st
	st.Tenants = sortedMapKeys(s.tenants)
	st.StoredSeries = len(s.entries)
	s.mu.Unlock()
	writeJSON(w, 200, st)
}

// stubQuery reads type, selector, start, end (ms; 0: unbounded) and tenant
// (empty: all) for /stub/totals and /stub/pprof.
func (s *server) stubQuery(w http.ResponseWriter, r *http.Request) (string, []*entry, []int, bool) {
	q := r.URL.Query()
	typ := q.Get("type")
	start, err1 := strconv.ParseInt(cmpOr(q.Get("start"), "0"), 10, 64)
	end, err2 := strconv.ParseInt(cmpOr(q.Get("end"), "0"), 10, 64)
	ms, err3 := parseSelector(q.Get("selector"))
	if err := errors.Join(err1, err2, err3); err != nil || len(strings.Split(typ, ":")) < 5 {
		http.Error(w, fmt.Sprintf("usage: %s?type=NAME:TYPE:UNIT:PTYPE:PUNIT[&selector={a=\"b\"}][&start=MS&end=MS][&tenant=T] (%v)", r.URL.Path, err), http.StatusBadRequest)
		return "", nil, nil, false
	}
	es, idx := s.selectEntries(q.Get("tenant"), typ, ms, start, end)
	if q.Get("spans") != "" {
		set, err := spanSet(strings.Split(q.Get("spans"), ","))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return "", nil, nil, false
		}
		es = withSpans(es, set)
	}
	return typ, es, idx, true
}

// stubPprof: the merged profile, gzipped pprof (for go tool pprof).
func (s *server) stubPprof(w http.ResponseWriter, r *http.Request) {
	typ, es, idx, ok := s.stubQuery(w, r)
	if !ok {
		return
	}
	p, err := merge(typ, es, idx)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	_ = p.Write(w)
}

// stubTotals: the sum of the asked sample type over the matching profiles,
// the self total of each leaf function, and the matching series' labels.
func (s *server) stubTotals(w http.ResponseWriter, r *http.Request) {
	_, es, idx, ok := s.stubQuery(w, r)
	if !ok {
		return
	}
	total, funcs, series, profs := int64(0), map[string]int64{}, map[string]map[string]string{}, map[int64]bool{}
	for k, e := range es {
		profs[e.seq] = true
		for _, smp := range e.prof.Sample {
			v := smp.Value[idx[k]]
			total += v
			leaf := "(no location)"
			if len(smp.Location) > 0 {
				loc := smp.Location[0]
				leaf = fmt.Sprintf("0x%x", loc.Address)
				if len(loc.Line) > 0 && loc.Line[0].Function != nil {
					leaf = loc.Line[0].Function.Name
				}
			}
			funcs[leaf] += v
		}
		m := map[string]string{}
		for _, l := range e.labels {
			m[l.Name] = l.Value
		}
		series[e.labels.String()] = m
	}
	list := []map[string]string{}
	for _, k := range sortedMapKeys(series) {
		list = append(list, series[k])
	}
	writeJSON(w, 200, map[string]any{"total": total, "profiles": len(profs), "functions": funcs, "series": list})
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func readSecret(path string) string {
	if path == "" {
		return ""
	}
	b, err := os.ReadFile(path)
	if err != nil {
		log.Fatal(err)
	}
	v := strings.TrimSpace(string(b))
	if v == "" {
		log.Fatalf("%s is empty", path)
	}
	return v
}

func main() {
	flag.Parse()
	log.SetFlags(log.LstdFlags | log.Lmicroseconds)
	s := &server{basic: readSecret(*basicFile), bearer: readSecret(*bearerFile)}
	s.reset()

	opts := connect.WithInterceptors(s.interceptor())
	mux := http.NewServeMux()
	path, h := pushv1connect.NewPusherServiceHandler(s, opts)
	mux.Handle(path, s.pushFront(h))
	path, h = querierv1connect.NewQuerierServiceHandler(s, opts)
	mux.Handle(path, h)
	mux.HandleFunc("GET /ready", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ready\n") })
	mux.HandleFunc("POST /stub/fail", s.stubFail)
	mux.HandleFunc("POST /stub/delay", s.stubDelay)
	mux.HandleFunc("POST /stub/reset", func(w http.ResponseWriter, _ *http.Request) {
		s.reset()
		writeJSON(w, 200, map[string]bool{"ok": true})
	})
	mux.HandleFunc("GET /stub/stats", s.stubStats)
	mux.HandleFunc("GET /stub/totals", s.stubTotals)
	mux.HandleFunc("GET /stub/pprof", s.stubPprof)

	srv := &http.Server{Addr: *addr, Handler: mux, Protocols: new(http.Protocols), ReadHeaderTimeout: 10 * time.Second}
	srv.Protocols.SetHTTP1(true)
	srv.Protocols.SetUnencryptedHTTP2(true) // h2c: gRPC clients work too
	go func() {
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
		<-sig
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}()
	log.Printf("pyroscope-stub listening on %s (reject-older-than=%v reject-newer-than=%v require-tenant=%v auth=%v)",
		*addr, *rejectOlder, *rejectNewer, *requireTenant, s.basic != "" || s.bearer != "")
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
	log.Print("stopped")
}
