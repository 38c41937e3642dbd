#!/bin/bash
# bridge.sh SOCKET PORT -- COMMAND...
# Relays 127.0.0.1:PORT to the gateway's unix socket for clients that speak only TCP, waits
# until the port accepts connections, runs COMMAND, then stops the relay (a tracer that
# follows every child waits for all of them) and exits with COMMAND's status.
sock=$1
port=$2
shift 3
socat "TCP-LISTEN:${port},bind=127.0.0.1,reuseaddr,fork,nodelay" "UNIX-CONNECT:${sock}" 2>/dev/null &
relay=$!
for _ in $(seq 500); do
    if (exec 3<>"/dev/tcp/127.0.0.1/${port}") 2>/dev/null; then
        break
    fi
    sleep 0.01
done
"$@"
status=$?
kill "$relay" 2>/dev/null
wait "$relay" 2>/dev/null
exit "$status"
