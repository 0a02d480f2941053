// A minimal OTLP profiles receiver for the peers benchmark: the
// OpenTelemetry eBPF profiler sends its profiles here over gRPC, and each
// sample is appended to a folded file as "PID;frame;...;frame COUNT", root
// first, Python frames by function name. Built inside the profiler's own
// module (bench/peers.sh copies it there), so that it reads the profiles
// with the same pdata version the profiler writes them with.
//
//	otelrecv ADDR OUT
package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"

	"go.opentelemetry.io/collector/pdata/pprofile"
	"go.opentelemetry.io/collector/pdata/pprofile/pprofileotlp"
	"google.golang.org/grpc"
	_ "google.golang.org/grpc/encoding/gzip" // the profiler gzips its requests
)

type receiver struct {
	pprofileotlp.UnimplementedGRPCServer
	mu  sync.Mutex
	out *os.File
}

func (r *receiver) Export(_ context.Context, req pprofileotlp.ExportRequest) (pprofileotlp.ExportResponse, error) {
	p := req.Profiles()
	d := p.Dictionary()
	str := func(i int32) string {
		if i < 0 || int(i) >= d.StringTable().Len() {
			return ""
		}
		return d.StringTable().At(int(i))
	}
	var b strings.Builder
	rps := p.ResourceProfiles()
	for i := 0; i < rps.Len(); i++ {
		rp := rps.At(i)
		pid := int64(-1)
		if v, ok := rp.Resource().Attributes().Get("process.pid"); ok {
			pid = v.Int()
		}
		sps := rp.ScopeProfiles()
		for j := 0; j < sps.Len(); j++ {
			profs := sps.At(j).Profiles()
			for k := 0; k < profs.Len(); k++ {
				samples := profs.At(k).Samples()
				for s := 0; s < samples.Len(); s++ {
					b.WriteString(folded(d, str, pid, samples.At(s)))
				}
			}
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, err := r.out.WriteString(b.String()); err != nil {
		return pprofileotlp.NewExportResponse(), err
	}
	return pprofileotlp.NewExportResponse(), r.out.Sync()
}

// One sample as a folded line; a location's lines are innermost first and
// a stack's locations leaf first (pprof's order), so both are reversed.
func folded(d pprofile.ProfilesDictionary, str func(int32) string, pid int64, s pprofile.Sample) string {
	frames := []string{fmt.Sprint(pid)}
	// The thread's name (a sample attribute) as the frame under the process.
	attrs := s.AttributeIndices()
	for a := 0; a < attrs.Len(); a++ {
		ai := int(attrs.At(a))
		if ai >= 0 && ai < d.AttributeTable().Len() && str(d.AttributeTable().At(ai).KeyStrindex()) == "thread.name" {
			frames = append(frames, strings.ReplaceAll(d.AttributeTable().At(ai).Value().AsString(), ";", ":"))
		}
	}
	si := int(s.StackIndex())
	if si >= 0 && si < d.StackTable().Len() {
		locs := d.StackTable().At(si).LocationIndices()
		for l := locs.Len() - 1; l >= 0; l-- {
			li := int(locs.At(l))
			if li < 0 || li >= d.LocationTable().Len() {
				continue
			}
			lines := d.LocationTable().At(li).Lines()
			if lines.Len() == 0 {
				frames = append(frames, "[native]")
				continue
			}
			for n := lines.Len() - 1; n >= 0; n-- {
				fi := int(lines.At(n).FunctionIndex())
				name := ""
				if fi >= 0 && fi < d.FunctionTable().Len() {
					name = str(d.FunctionTable().At(fi).NameStrindex())
				}
				if name == "" {
					name = "[native]"
				}
				frames = append(frames, strings.ReplaceAll(name, ";", ":"))
			}
		}
	}
	count := int64(0)
	for v := 0; v < s.Values().Len(); v++ {
		count += s.Values().At(v)
	}
	if count == 0 {
		count = int64(s.TimestampsUnixNano().Len())
	}
	if count == 0 {
		count = 1
	}
	return fmt.Sprintf("%s %d\n", strings.Join(frames, ";"), count)
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: otelrecv ADDR OUT")
		os.Exit(2)
	}
	out, err := os.OpenFile(os.Args[2], os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, "otelrecv:", err)
		os.Exit(1)
	}
	lis, err := net.Listen("tcp", os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "otelrecv:", err)
		os.Exit(1)
	}
	srv := grpc.NewServer()
	pprofileotlp.RegisterGRPCServer(srv, &receiver{out: out})
	w := bufio.NewWriter(os.Stderr)
	fmt.Fprintln(w, "otelrecv: listening on", lis.Addr())
	w.Flush()
	if err := srv.Serve(lis); err != nil {
		fmt.Fprintln(os.Stderr, "otelrecv:", err)
		os.Exit(1)
	}
}
