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
#                        /var/lib/prometheus/node-exporter/atlas2kudu.prom); the script's own
#                        (last run, exit status, exports waiting) go beside it, in
#                        atlas2kudu-backfill.prom
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
# the lock, 64 for a bad setting, 66 when the inbox does not exist, 73 when the state directory,
# its lock or (ATLAS2KUDU_REPORT=failures) the run's private log file in $TMPDIR cannot be
# created, 74 when the inbox cannot be listed or an export cannot be moved, 77
# when kinit fails, 65 when an export stays unfinished and unchanged for 3 runs in a row or has a
# name the checkpoint cannot be matched for (after atlas2kudu exited 0), 143, 130, 129 or 131 when
# stopped by SIGTERM, SIGINT, SIGHUP or SIGQUIT, 0 when the inbox is empty.
# Exports the run applied to their end, and that did not change while it ran, move to
# $ATLAS2KUDU_INBOX/done; the others stay for the next run, which resumes them from the checkpoint.
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

# The script's own metrics, beside atlas2kudu's (NAME.prom -> NAME-backfill.prom), written however
# it ends: when it last ran (an empty inbox, or a run that never reached atlas2kudu, moves it too),
# its exit status, and the exports left in the inbox.
# shellcheck disable=SC2317  # called from the EXIT trap
write_script_metrics() {
  local file=${metrics%.prom}-backfill.prom waiting
  waiting=$(find -H "$inbox" -mindepth 1 -maxdepth 1 -type f \( -name '*.jsonl' -o -name '*.jsonl.gz' \) \
    -printf . 2>/dev/null | wc -c) || waiting=0
  local tmp=$file.tmp.$$
  if { {
    echo "# HELP atlas2kudu_backfill_last_run_timestamp_seconds When the backfill script last ended."
    echo "# TYPE atlas2kudu_backfill_last_run_timestamp_seconds gauge"
    echo "atlas2kudu_backfill_last_run_timestamp_seconds $(date +%s)"
    echo "# HELP atlas2kudu_backfill_last_exit_status The backfill script's last exit status."
    echo "# TYPE atlas2kudu_backfill_last_exit_status gauge"
    echo "atlas2kudu_backfill_last_exit_status $1"
    echo "# HELP atlas2kudu_backfill_exports_waiting Exports in the inbox when it last ended."
    echo "# TYPE atlas2kudu_backfill_exports_waiting gauge"
    echo "atlas2kudu_backfill_exports_waiting $waiting"
  } >"$tmp"; } 2>/dev/null && chmod 0644 "$tmp" 2>/dev/null && mv -fT "$tmp" "$file" 2>/dev/null
  then
    :
  else
    rm -f "$tmp"
    log "cannot write $file"
  fi
}
# shellcheck disable=SC2317  # called from the EXIT trap
# A command failing in here neither ends the trap early (set -e) nor changes the status.
on_exit() {
  local status=$1
  set +e
  if [ -n "${run_log:-}" ]; then
    if [ "$status" -ne 0 ] && ! progressed_to_deadline "$status"; then cat "$run_log" >&8; fi
    rm -f "$run_log"
    exec 2>&8  # from here on, stderr whatever the status: a failed metrics write needs a look
  fi
  if [ -n "$metrics" ]; then write_script_metrics "$status"; fi
  exit "$status"
}
trap 'on_exit $?' EXIT
# A signal ends the script with its status, so that the EXIT trap sees a failure (bash would
# otherwise run it with the status of the last command, often 0). One sent to the script alone
# (`kill PID`, not its process group as systemd and timeout(1) signal) goes on to atlas2kudu, so
# that it stops as cleanly (the running statement cancelled, the checkpoint kept) and is waited
# for; had the group been signalled too, atlas2kudu takes the two as one (within a fifth of a
# second of each other, see SIGNALS in `man atlas2kudu`).
child=
# shellcheck disable=SC2317  # called from the traps
stop() {
  if [ -n "$child" ]; then
    kill -s "$1" "$child" 2>/dev/null
    wait "$child" || true  # its status is not the script's (set -e would exit with it)
  fi
  exit "$2"
}
trap 'stop TERM 143' TERM
trap 'stop INT 130' INT
trap 'stop HUP 129' HUP
# atlas2kudu, run in the background, ignores SIGQUIT (as bash leaves it there): a SIGTERM stops it.
trap 'stop TERM 131' QUIT

if ! [[ "$settle" =~ ^[0-9]+$ ]]; then
  log "ATLAS2KUDU_SETTLE=$settle: give a whole number of seconds"
  exit 64
fi
case "$report" in
  all) ;;
  failures)
    # The run's lines go to a private file; they reach stderr (and cron's mail) only on failure.
    # (Set only once made: the EXIT trap shows and removes it.)
    if ! private_log=$(mktemp "${TMPDIR:-/tmp}/atlas2kudu-backfill.XXXXXXXX" 2>&1); then
      log "ATLAS2KUDU_REPORT=failures keeps the run's lines in a private file, which could not be" \
        "created ($private_log): set TMPDIR to a writable directory"
      exit 73
    fi
    run_log=$private_log
    exec 8>&2 2>"$run_log"
    # A run stopped by the deadline after applying windows: progress, not a failure to look at.
    # shellcheck disable=SC2317  # called from the EXIT trap
    progressed_to_deadline() {
      [ "$1" -eq 4 ] && [ -n "${stats_file:-}" ] && [ -f "$stats_file" ] &&
        grep -q '"stopped_by":"deadline"' "$stats_file" &&
        grep -Eq '"applied_windows":[1-9]' "$stats_file"
    }
    ;;
  *)
    log "ATLAS2KUDU_REPORT=$report: give all or failures"
    exit 64
    ;;
esac

# A missing inbox is a typo or a spool that is not mounted, not an empty day: made here, it would
# stay empty for ever.
if [ ! -d "$inbox" ]; then
  log "the inbox $inbox does not exist (ATLAS2KUDU_INBOX); create it, or mount its file system"
  exit 66
fi
# find runs in a process substitution, whose failure would read as an empty inbox.
if [ ! -r "$inbox" ] || [ ! -x "$inbox" ]; then
  log "cannot list the inbox $inbox"
  exit 74
fi
if ! mkdir -p "$state/rejects" "$state/stats" "$inbox/done"; then
  log "cannot create the state directories under $state (ATLAS2KUDU_STATE) or $inbox/done"
  exit 73
fi

# One backfill at a time. atlas2kudu also locks its checkpoint (exit 75), but this lock covers
# moving the applied files too. Descriptor 9 is closed for every command the script starts, so
# that a process left behind (by a password helper, say) never holds the lock.
if ! { exec 9>>"$state/backfill.lock"; } 2>/dev/null; then
  log "cannot open the lock $state/backfill.lock (run as the service user?)"
  exit 73
fi
if ! flock -n 9; then
  log "another backfill is running; nothing done"
  exit 75
fi

# The exports left unmodified for $settle seconds (0: all of them), in byte order of their names (.gz and plain
# files interleaved); any name, newlines included, passes intact.
cutoff=$(( $(date +%s) - 10#$settle ))  # 10#: "08" is eight seconds, not a bad octal number
exports() {
  find -H "$inbox" -mindepth 1 -maxdepth 1 -type f \( -name '*.jsonl' -o -name '*.jsonl.gz' \) "$@" \
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
  if ! kinit -k -t "$ATLAS2KUDU_KEYTAB" \
      "${ATLAS2KUDU_PRINCIPAL:?set ATLAS2KUDU_PRINCIPAL with ATLAS2KUDU_KEYTAB}" 9>&-; then
    log "kinit with $ATLAS2KUDU_KEYTAB failed; nothing applied"
    exit 77
  fi
fi

# What each export is when the run starts (device, inode, size, modification time): one that
# changes while the run reads it (appended to, or replaced by a new export of the same name) is
# not moved afterwards.
declare -A identity_at_start
for f in "${inputs[@]}"; do identity_at_start[$f]=$(stat -c '%d:%i:%s:%Y' -- "$f"); done

started=$(date -u +%Y%m%dT%H%M%SZ)
stats_file="$state/stats/$started-$$.json"  # the PID: two runs in one second keep both
args=(apply --config "$conf"
      --checkpoint "$state/checkpoint"
      --reject-file "$state/rejects/$(date -u +%F).jsonl"
      --stats "$stats_file"
      --deadline "$deadline")
if [ -n "$metrics" ]; then args+=(--metrics-textfile "$metrics"); fi

log "applying ${#inputs[@]} export(s), stats in $stats_file"
status=0
# In the background and waited for, so that a signal reaches the traps above at once (bash runs
# them only after a command in the foreground ends).
"$bin" "${args[@]}" -- "${inputs[@]}" 9>&- </dev/null &
child=$!
wait "$child" || status=$?
child=

# Whether the checkpoint records export $1 as applied to its end by this run (its entry in the
# file, atlas2kudu-checkpoint/3: {"name":...,"identity":...,"next_record":N,"complete":true,
# "framing":F,"records_digest":...,"last_run":R} with R this run; an earlier release writes no
# records_digest). Not so for an export whose last records wait for
# the rest of a split message in a later export. Only for a name_matchable one.
applied_to_its_end() {
  local text run pattern
  text=$(cat -- "$state/checkpoint") || return 1
  [[ "$text" =~ \{\"format\":\"atlas2kudu-checkpoint/3\".*\"runs\":([0-9]+), ]] || return 1
  run=${BASH_REMATCH[1]}
  pattern=$(printf '%s' "$1" | sed 's/[][\.*^$+?(){}|]/\\&/g')
  grep -Eq "\\{\"name\":\"$pattern\",\"identity\":\"[0-9a-f]+\",\"next_record\":[0-9]+,\"complete\":true,\"framing\":[0-9]+,(\"records_digest\":\"[0-9a-f]+\",)?\"last_run\":$run\\}" \
    <<<"$text"
}

# Whether the checkpoint writes export $1's name as it is: not one with a quote, a backslash or a
# control character below space (JSON escapes them; DEL it does not), nor one that is not UTF-8
# (written as U+FFFD; where iconv is missing, such a name ends as an unfinished export).
name_matchable() {
  case "$1" in *[\"\\]* | *[$'\001'-$'\037']*) return 1 ;; esac
  # Code points above U+10FFFF, which glibc's iconv lets through (LC_ALL=C: byte ranges).
  case "$1" in *$'\xf4'[$'\x90'-$'\xbf']* | *[$'\xf5'-$'\xff']*) return 1 ;; esac
  if command -v iconv >/dev/null; then iconv -f UTF-8 -t UTF-8 <<<"$1" >/dev/null 2>&1; fi
}

# Exports left unfinished, unchanged, run after run: "identity count" lines (stat's identity
# above), kept in $state/unfinished from one run to the next.
declare -A unfinished_before
if [ -f "$state/unfinished" ]; then
  while read -r id count; do
    if [ -n "$id" ]; then unfinished_before[$id]=$count; fi
  done <"$state/unfinished"
fi
stuck_after=3  # runs: a split message's other parts may still be settling in the second

if [ "$status" -eq 0 ]; then
  done_now=() left=() unfinished_now=() stuck=0 bad_names=0
  for f in "${inputs[@]}"; do
    if [ "$(stat -c '%d:%i:%s:%Y' -- "$f" 2>/dev/null)" != "${identity_at_start[$f]}" ]; then
      log "$f changed while the run read it; it stays for the next run"
      left+=("$f")
    elif ! name_matchable "$f"; then
      log "$(printf '%q' "$f"): its name holds a quote, a backslash or a control character, or is" \
          "not UTF-8, so the checkpoint cannot say whether it was applied to its end; it stays." \
          "Rename it: the next run recognises what it applied by the export's content"
      left+=("$f")
      bad_names=1
    elif ! applied_to_its_end "$f"; then
      id=${identity_at_start[$f]}
      count=$(( ${unfinished_before[$id]:-0} + 1 ))
      unfinished_now+=("$id $count")
      left+=("$f")
      if [ "$count" -ge "$stuck_after" ]; then
        log "$f is not applied to its end in $count runs in a row, unchanged: a split message" \
            "whose other parts never came, or a last record cut short, here or in an export" \
            "before it (see $state/rejects);" \
            "once looked at, move it out of the inbox"
        stuck=1
      else
        log "$f is not applied to its end (a split message waits for its other parts, or its" \
            "last record, or an earlier export's, is cut short); it stays for the next run"
      fi
    else
      done_now+=("$f")
    fi
  done
  if [ ${#unfinished_now[@]} -gt 0 ]; then
    printf '%s\n' "${unfinished_now[@]}" >"$state/unfinished"
  else
    rm -f "$state/unfinished"
  fi
  # An export of the same name applied before becomes NAME.~1~ (NAME.~2~, ...) in done/, and
  # this one takes NAME.
  if [ ${#done_now[@]} -gt 0 ] && ! mv --backup=numbered -- "${done_now[@]}" "$inbox/done/"; then
    log "cannot move the applied exports to $inbox/done; the next run skips what they hold"
    exit 74
  fi
  log "done; ${#done_now[@]} export(s) moved to $inbox/done, ${#left[@]} left in the inbox"
  if [ "$stuck" -eq 1 ] || [ "$bad_names" -eq 1 ]; then exit 65; fi
else
  # Nothing moves: the next run resumes from the checkpoint, after the last applied window.
  log "atlas2kudu exited $status; the exports stay in the inbox for the next run"
fi
exit "$status"
