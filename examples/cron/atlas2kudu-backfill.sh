#!/bin/bash
# Applies every Atlas notification export waiting in the inbox to the Kudu projections, once.
# Meant for cron or the systemd timer next to it; safe to start while a previous run is going
# (it skips), after a crash or a kill (the checkpoint resumes after the last applied window), and
# on a day with nothing to do (it exits 0).
#
# Settings come from the environment, with defaults for a system install:
#   ATLAS2KUDU           the binary                      (atlas2kudu, from $PATH)
#   ATLAS2KUDU_CONF      connection and run options      (/etc/atlas2kudu/backfill.conf)
#   ATLAS2KUDU_STATE     checkpoint, rejects, stats      (/var/lib/atlas2kudu)
#   ATLAS2KUDU_INBOX     exports to apply, *.jsonl[.gz]  (/var/spool/atlas2kudu/inbox)
#   ATLAS2KUDU_DEADLINE  stop the run after this long    (50m; keep it under the schedule's period)
#   ATLAS2KUDU_METRICS   Prometheus textfile to write    (none; e.g.
#                        /var/lib/prometheus/node-exporter/atlas2kudu.prom)
#   ATLAS2KUDU_SETTLE    seconds an export must be left unmodified before it is applied (60): one
#                        still being written waits for the next run, instead of being applied
#                        with its last record cut short and then moved to done/
#   ATLAS2KUDU_REPORT    all: every line on stderr (the journal keeps them); failures: stderr only
#                        when the run needs a look, with all its lines (for cron, which mails
#                        stderr): any failure, except a run that applied windows and then reached
#                        ATLAS2KUDU_DEADLINE (a long backfill making progress; exit 4 all the same)
#   ATLAS2KUDU_KEYTAB, ATLAS2KUDU_PRINCIPAL
#                        Kerberos: a ticket is taken from this keytab into a private cache
#                        before the run (the configuration then sets kerberos = true)
# LDAP instead: the configuration names a password helper that reads a file only the service
# user can read (ldap_password_cmd = cat /etc/atlas2kudu/ldap-password); the password never
# appears on a command line, in the environment or in the logs.
#
# Exit status: atlas2kudu's (see `man atlas2kudu`, EXIT STATUS), 75 when another backfill holds
# the lock, 64 for a bad setting, 0 when the inbox is empty. Applied exports move to
# $ATLAS2KUDU_INBOX/done.
set -euo pipefail
umask 077
export LC_ALL=C  # the inbox is applied in byte order of the file names

bin=${ATLAS2KUDU:-atlas2kudu}
conf=${ATLAS2KUDU_CONF:-/etc/atlas2kudu/backfill.conf}
state=${ATLAS2KUDU_STATE:-/var/lib/atlas2kudu}
inbox=${ATLAS2KUDU_INBOX:-/var/spool/atlas2kudu/inbox}
deadline=${ATLAS2KUDU_DEADLINE:-50m}
metrics=${ATLAS2KUDU_METRICS:-}
settle=${ATLAS2KUDU_SETTLE:-60}
report=${ATLAS2KUDU_REPORT:-all}

log() { echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) atlas2kudu-backfill: $*" >&2; }

if ! [[ "$settle" =~ ^[0-9]+$ ]]; then
  log "ATLAS2KUDU_SETTLE=$settle: give a whole number of seconds"
  exit 64
fi
case "$report" in
  all) ;;
  failures)
    # The run's lines go to a private file; they reach stderr (and cron's mail) only on failure.
    run_log=$(mktemp "${TMPDIR:-/tmp}/atlas2kudu-backfill.XXXXXXXX")
    exec 8>&2 2>"$run_log"
    # A run stopped by the deadline after applying windows: progress, not a failure to look at.
    # shellcheck disable=SC2317  # called from the EXIT trap
    progressed_to_deadline() {
      [ "$1" -eq 4 ] && [ -n "${stats_file:-}" ] && [ -f "$stats_file" ] &&
        grep -q '"stopped_by":"deadline"' "$stats_file" &&
        grep -Eq '"applied_windows":[1-9]' "$stats_file"
    }
    trap 'status=$?
          if [ "$status" -ne 0 ] && ! progressed_to_deadline "$status"; then cat "$run_log" >&8; fi
          rm -f "$run_log"' EXIT
    ;;
  *)
    log "ATLAS2KUDU_REPORT=$report: give all or failures"
    exit 64
    ;;
esac

# find runs in a process substitution, whose failure would read as an empty inbox.
if [ -d "$inbox" ] && { [ ! -r "$inbox" ] || [ ! -x "$inbox" ]; }; then
  log "cannot list the inbox $inbox"
  exit 74
fi
mkdir -p "$state/rejects" "$state/stats" "$inbox/done"

# One backfill at a time. atlas2kudu also locks its checkpoint (exit 75), but this lock covers
# moving the applied files too.
exec 9>>"$state/backfill.lock"
if ! flock -n 9; then
  log "another backfill is running; nothing done"
  exit 75
fi

# The exports left unmodified for $settle seconds (0: all of them), in byte order of their names (.gz and plain
# files interleaved); any name, newlines included, passes intact.
cutoff=$(( $(date +%s) - 10#$settle ))  # 10#: "08" is eight seconds, not a bad octal number
exports() {
  find "$inbox" -mindepth 1 -maxdepth 1 -type f \( -name '*.jsonl' -o -name '*.jsonl.gz' \) "$@" \
    -print0 | sort -z
}
if [ $((10#$settle)) -eq 0 ]; then
  mapfile -d '' -t inputs < <(exports)
  settling=()
else
  mapfile -d '' -t inputs < <(exports ! -newermt "@$cutoff")
  mapfile -d '' -t settling < <(exports -newermt "@$cutoff")
fi
if [ ${#settling[@]} -gt 0 ]; then
  log "${#settling[@]} export(s) modified in the last ${settle} s wait for the next run: ${settling[*]}"
fi
if [ ${#inputs[@]} -eq 0 ]; then
  if [ ${#settling[@]} -eq 0 ]; then log "the inbox is empty; nothing to apply"; fi
  exit 0
fi

if [ -n "${ATLAS2KUDU_KEYTAB:-}" ]; then
  export KRB5CCNAME="FILE:$state/krb5cc"
  kinit -k -t "$ATLAS2KUDU_KEYTAB" "${ATLAS2KUDU_PRINCIPAL:?set ATLAS2KUDU_PRINCIPAL with ATLAS2KUDU_KEYTAB}"
fi

started=$(date -u +%Y%m%dT%H%M%SZ)
stats_file="$state/stats/$started.json"
args=(apply --config "$conf"
      --checkpoint "$state/checkpoint"
      --reject-file "$state/rejects/$(date -u +%F).jsonl"
      --stats "$stats_file"
      --deadline "$deadline")
if [ -n "$metrics" ]; then args+=(--metrics-textfile "$metrics"); fi

log "applying ${#inputs[@]} export(s), stats in $stats_file"
status=0
"$bin" "${args[@]}" -- "${inputs[@]}" || status=$?

if [ "$status" -eq 0 ]; then
  # An export of the same name applied before is kept as NAME.~1~, not overwritten.
  mv --backup=numbered -- "${inputs[@]}" "$inbox/done/"
  log "done; ${#inputs[@]} export(s) moved to $inbox/done"
else
  # Nothing moves: the next run resumes from the checkpoint, after the last applied window.
  log "atlas2kudu exited $status; the exports stay in the inbox for the next run"
fi
exit "$status"
