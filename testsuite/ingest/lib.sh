# Shared by test-ingestd.sh and test-ingestd-load.sh, sourced once they have set $top (the functions
# use the $tmp they make later).

# The programs under test (the build tree's) and the tools they need.
build="${abs_top_builddir:-$top/_build}"
ingestd="$build/contribs/ingestd/dlsched-ingestd"
dbtool="$build/contribs/db/dlsched-db"
munged=$(command -v munged 2>/dev/null || echo /usr/sbin/munged)
py=/usr/bin/python3

# start_munged NAME [munged options]: a private munged in $tmp/NAME: its own socket ($tmp/NAME/sock),
# key, pid, log and seed files. Exits the test when it does not start.
start_munged() {
	d="$tmp/$1"
	shift
	mkdir -m 755 "$d"
	dd if=/dev/urandom of="$d/key" bs=1024 count=1 2>/dev/null
	chmod 600 "$d/key"
	"$munged" --socket="$d/sock" --key-file="$d/key" --pid-file="$d/pid" --log-file="$d/log" \
		--seed-file="$d/seed" "$@" || { echo "FAIL: munged did not start: $(cat "$d/log" 2>/dev/null)"; exit 1; }
	i=0
	while [ ! -S "$d/sock" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
}

# listening_port OUT PID: the port dlsched-ingestd (process PID, standard output to OUT) says it
# listens on, waiting up to 10 s; nothing when it did not start.
listening_port() {
	i=0
	while ! grep -q "listening on" "$1" && [ $i -lt 100 ]; do
		kill -0 "$2" 2>/dev/null || break
		sleep 0.1
		i=$((i + 1))
	done
	sed -n 's/^dlsched-ingestd: listening on 127\.0\.0\.1:\([0-9][0-9]*\)$/\1/p' "$1"
}
