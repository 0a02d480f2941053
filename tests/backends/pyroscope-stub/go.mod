module pyebpf.test/pyroscope-stub

go 1.26.0

require (
	connectrpc.com/connect v1.21.1
	github.com/google/pprof v0.0.0-20261105003125-4bf881d7fb0b
	github.com/grafana/pyroscope/api v1.6.0
	google.golang.org/protobuf v1.36.11
)

require (
	github.com/google/gnostic v0.7.1 // indirect
	github.com/google/gnostic-models v0.7.0 // indirect
	github.com/gorilla/mux v1.8.1 // indirect
	github.com/planetscale/vtprotobuf v0.6.1-0.20250313105119-ba97887b0a25 // indirect
	go.yaml.in/yaml/v3 v3.0.4 // indirect
	golang.org/x/net v0.56.0 // indirect
	golang.org/x/sys v0.46.0 // indirect
	golang.org/x/text v0.39.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20260427160629-7cedc36a6bc4 // indirect
	google.golang.org/grpc v1.82.1 // indirect
)
