#!/usr/bin/env bash
# nginx from Debian terminating TLS in front of a backend on loopback, with a
# CA made here by openssl: how a fleet's Pyroscope is usually reached.
#   tls.sh start DIR PORT UPSTREAM_PORT   -> DIR/ca.pem (trust it), DIR/other-ca.pem (a CA that
#                                            did not sign the server: a wrong --ca-file)
#   tls.sh stop DIR
set -euo pipefail

die() { echo "tls.sh: $*" >&2; exit 1; }

start() {
	local dir=$1 port=$2 up=$3
	mkdir -p "$dir/tmp"
	command -v nginx >/dev/null || die "nginx missing (make deps installs nginx-light)"
	# A CA, a server certificate for 127.0.0.1 and localhost signed by it, and another CA.
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=pyebpf test CA" \
		-keyout "$dir/ca.key" -out "$dir/ca.pem" 2>/dev/null
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=some other CA" \
		-keyout "$dir/other-ca.key" -out "$dir/other-ca.pem" 2>/dev/null
	openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" \
		-keyout "$dir/server.key" -out "$dir/server.csr" 2>/dev/null
	printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' >"$dir/san.ext"
	openssl x509 -req -in "$dir/server.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" -CAcreateserial \
		-days 2 -extfile "$dir/san.ext" -out "$dir/server.pem" 2>/dev/null
	cat >"$dir/nginx.conf" <<CONF
daemon off;
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/error.log warn;
events { worker_connections 64; }
http {
	access_log off;
	client_body_temp_path $dir/tmp/body;
	proxy_temp_path $dir/tmp/proxy;
	fastcgi_temp_path $dir/tmp/fastcgi;
	uwsgi_temp_path $dir/tmp/uwsgi;
	scgi_temp_path $dir/tmp/scgi;
	client_max_body_size 64m;
	server {
		listen 127.0.0.1:$port ssl;
		ssl_certificate $dir/server.pem;
		ssl_certificate_key $dir/server.key;
		location / {
			proxy_pass http://127.0.0.1:$up;
			proxy_http_version 1.1;
			proxy_set_header Connection "";
		}
	}
}
CONF
	nginx -c "$dir/nginx.conf" -p "$dir" >"$dir/nginx.out" 2>&1 &
	echo $! >"$dir/pid"
	for _ in $(seq 100); do
		if curl -s -o /dev/null --cacert "$dir/ca.pem" "https://127.0.0.1:$port/"; then
			return 0
		fi
		kill -0 "$(cat "$dir/pid")" 2>/dev/null || break
		sleep 0.1
	done
	tail -n 20 "$dir/error.log" "$dir/nginx.out" >&2 || true
	die "nginx did not start on 127.0.0.1:$port"
}

stop() {
	local dir=$1 pid
	[ -f "$dir/pid" ] || return 0
	pid=$(cat "$dir/pid")
	kill "$pid" 2>/dev/null || true
	for _ in $(seq 50); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	rm -f "$dir/pid"
}

case "${1:-}" in
start) [ $# = 4 ] || die "usage: tls.sh start DIR PORT UPSTREAM_PORT"; start "$2" "$3" "$4" ;;
stop) [ $# = 2 ] || die "usage: tls.sh stop DIR"; stop "$2" ;;
*) die "usage: tls.sh start DIR PORT UPSTREAM_PORT | stop DIR" ;;
esac
