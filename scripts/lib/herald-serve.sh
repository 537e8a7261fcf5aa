# Sourced by the check scripts (check-quickstart.sh, check-jpush-client.sh): starts a
# throwaway `herald serve` all-in-one in the current directory (embedded PostgreSQL under
# ./.herald, free ports on loopback, the APNs sandbox on) and stops it.
#
#   source "$root/scripts/lib/herald-serve.sh"
#   herald_serve "$bin_dir" [herald serve options...]   # sets HERALD_PORT, HERALD_MQTT_PORT,
#                                                        # HERALD_INSPECT_PORT, herald_pid
#   herald_stop                                          # SIGINT, then waits for it
#
# The server's output goes to ./server.out and ./server.err; on a failed start the
# function prints server.err and returns non-zero.

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

herald_serve() {
    local bin_dir="$1"
    shift
    HERALD_PORT="$(free_port)"
    HERALD_MQTT_PORT="$(free_port)"
    HERALD_INSPECT_PORT="$(free_port)"
    local sandbox_port
    sandbox_port="$(free_port)"
    HERALD_APNS_SANDBOX_PORT="$sandbox_port" HERALD_APNS_SANDBOX_INSPECT_PORT="$HERALD_INSPECT_PORT" \
        "$bin_dir/herald" serve --http-port "$HERALD_PORT" --http-host 127.0.0.1 --mqtt-port "$HERALD_MQTT_PORT" "$@" \
        > server.out 2> server.err &
    herald_pid=$!
    for _ in $(seq 1 120); do
        grep -q "Herald is running" server.out 2> /dev/null && return 0
        if ! kill -0 "$herald_pid" 2> /dev/null; then
            cat server.err >&2
            herald_pid=""
            return 1
        fi
        sleep 0.5
    done
    echo "herald did not start within 60 s" >&2
    cat server.err >&2
    return 1
}

herald_stop() {
    if [ -n "${herald_pid:-}" ]; then
        kill -INT "$herald_pid" 2> /dev/null || true
        wait "$herald_pid" 2> /dev/null || true
        herald_pid=""
    fi
}
