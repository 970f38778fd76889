#!/usr/bin/env bash
# Throughput benchmark of compactor on a deterministic synthetic Claude Code corpus
# (DESIGN.md §9). Measures side by side, one process per step, wall clock:
#   (a) cat of the corpus                      the I/O floor
#   (b) compactor-bench parse-floor            serde_json into typed structs, 1 thread
#   (c) compactor replay, chars4, extractive   --jobs 1; target ≥ 0.6x (b)
#   (c0) (c) with --no-quality: the replay without its summary-quality pass
#       (atom index, scoring of every compaction); target ≥ 0.35x (b)
#   (c0') (b) and (c0) again, BENCH_PAIRS times back to back, in alternating
#       order; the median of the pairs' ratios
#   (q) the quality pass's cost: time of (c) against (c0); target ≤ 2x
#   (q') (c0) and (c) again, the same way; the median of the pairs' ratios
#   (d) the same with --estimator o200k        --jobs 1; target ≥ 0.8x (e)
#   (e) compactor-bench count-o200k            raw o200k counting of the same text
#   (d') (e) and (d) again, BENCH_PAIRS times back to back, in alternating order;
#       the median of the pairs' ratios (one pair is noise on a shared host)
#   (f) compactor compare with 5 presets       --jobs 1; target ≤ 1.5x the time of (c)
#   (g) (c) with --jobs 2                      target ≥ 1.8x speed-up over (c)
#   (g') (c) and (g) again, the same way; the median of the pairs' speed-ups
#   (h) compactor sweep, grids/default.toml    (72 points) on the real corpus
#       (../shared/corpus); target < 3x the time of one single-preset replay
#       of the same sessions (every output written) that is one of the
#       sweep's points: the default preset under the grid's [base] (the step
#       checks that its totals equal a row of sweep.csv, and says which);
#       both on all cores (the sweep's points run in parallel); also shown
#       at --jobs 1; and, for information, the sweep against `replay
#       --preset default` at the preset's own 200K window, a policy outside
#       the grid under which the corpus compacts far less
# and, for information, (e') the counting of (e) with compactor's own o200k
# estimator (it remembers the count of each pre-tokenized piece).
# Steps whose compactor command is not built yet are reported as skipped.
#
# Usage:
#   scripts/bench.sh [SIZE]            SIZE like 500MB (default), 50MB, 1GB
#   scripts/bench.sh --linearity [N]   one session of N and one of 4N turns (default
#                                      N=100): time(4N)/time(N) of replay, ~4 if linear;
#                                      a note gives how much the bytes and the applied
#                                      compactions grew, and the ratio per byte
#   scripts/bench.sh --memory [SIZE]   peak RSS of replay (all cores, transcripts
#                                      written) over a corpus of SIZE (default 2GB);
#                                      target: under 1 GB, bounded by the sessions in
#                                      flight, not the corpus
#   scripts/bench.sh --sweep           step (h) alone
#   scripts/bench.sh --shards [SIZE]   one replay (two presets, all cores, every output)
#                                      against the same replay split into BENCH_SHARDS
#                                      shards (default 4) run one after another, each
#                                      on all cores, plus `compactor merge` of their
#                                      partials (given in reverse), BENCH_REPEAT rounds
#                                      (default 3) alternating which goes first: median
#                                      wall times, peak RSS, the merge's share of the
#                                      split run, and whether the merged outputs are
#                                      byte-identical to the single run's (default
#                                      SIZE 1GB)
# Environment:
#   COMPACTOR_BENCH_DIR  corpus cache (default ~/.cache/compactor-bench); a corpus
#                        is reused when the same size, seed and generator made it
#   BENCH_SEED           generator seed (default 1)
#   BENCH_PRESETS        the presets of (f) (default "default nous vibe opal dotnet")
#   COMPACTOR_BIN        the compactor binary to measure (default: this tree's release build)
#   BENCH_COUNT          "instructions": --linearity counts instructions with
#                        valgrind --tool=cachegrind instead of timing (repeatable on
#                        a busy machine, where wall time is noisy); in corpus mode,
#                        (b), (c), (c0), (d), (e) and (f) are also counted, one run
#                        each, and their ratios given in instructions next to the
#                        timed ones, with their mispredicted branches in a note
#                        (cachegrind runs ~50x slower: use a small SIZE, e.g.
#                        50MB); default "time"
#   COMPACTOR_CORPUS     the real corpus of step (h) (default ../shared/corpus)
#   BENCH_REPEAT         runs of each command in step (h); the median is kept (default 5)
#   BENCH_PAIRS          back-to-back pairs in steps (c0'), (q'), (d') and (g'), alternating (default 4; 0: none)
set -euo pipefail
cd "$(dirname "$0")/.."

mode=corpus
size=500MB
turns=100
case "${1:-}" in
  -h | --help)
    sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
    exit 0
    ;;
  --linearity)
    mode=linearity
    turns=${2:-100}
    ;;
  --memory)
    mode=memory
    size=${2:-2GB}
    ;;
  --sweep)
    mode=sweep
    ;;
  --shards)
    mode=shards
    size=${2:-1GB}
    ;;
  "") ;;
  *) size=$1 ;;
esac
seed=${BENCH_SEED:-1}
presets=${BENCH_PRESETS:-default nous vibe opal dotnet}
cache=${COMPACTOR_BENCH_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/compactor-bench}

echo "building release binaries (cargo build --release --bins --features testkit)..." >&2
cargo build --release --bins --features testkit --quiet
bin=${CARGO_TARGET_DIR:-target}/release
bench=$bin/compactor-bench
compactor=${COMPACTOR_BIN:-$bin/compactor}

work=$(mktemp -d "${TMPDIR:-/tmp}/compactor-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

have_time=false
if [[ -x /usr/bin/time ]] && /usr/bin/time -f %M -o /dev/null true 2>/dev/null; then
  have_time=true
fi

# run_step NAME CMD...: run CMD with stdout and stderr in $work/NAME.log; sets
# secs (wall clock), rss (peak RSS in MB, or "?") and rc.
run_step() {
  local name=$1
  shift
  local t0 t1
  rc=0
  t0=$(date +%s.%N)
  if $have_time; then
    /usr/bin/time -f %M -o "$work/$name.rss" "$@" >"$work/$name.log" 2>&1 || rc=$?
  else
    "$@" >"$work/$name.log" 2>&1 || rc=$?
  fi
  t1=$(date +%s.%N)
  secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
  rss="?"
  if $have_time && [[ -s $work/$name.rss ]]; then
    # GNU time puts "Command exited with non-zero status N" first on failure.
    rss=$(tail -n 1 "$work/$name.rss" | awk '{ printf "%.0f", $1 / 1024 }')
  fi
}

# count_ir NAME CMD...: the instructions CMD executes, all its threads, as
# cachegrind counts them ("I refs"); nothing printed when the run fails. Its
# simulated mispredicted branches go to $work/NAME.bcm: instructions alone
# miss them, and a branch on the text itself costs more than a dozen
# instructions each time the predictor misses it.
count_ir() {
  local name=$1
  shift
  valgrind --tool=cachegrind --cache-sim=no --branch-sim=yes --cachegrind-out-file="$work/$name.cg" "$@" \
    >"$work/$name.log" 2>&1 || return 1
  awk '/Mispredicts:/ { gsub(",", "", $3); print $3 }' "$work/$name.log" >"$work/$name.bcm"
  awk '/I[[:space:]]+refs:/ { gsub(",", "", $4); print $4 }' "$work/$name.log"
}

# have_valgrind: whether count_ir can run; if not, a note says how to get it.
have_valgrind() {
  command -v valgrind >/dev/null && return 0
  notes+=("instruction counts skipped: valgrind not found (apt-get install valgrind)")
  return 1
}

# bcm_of NAME: the mispredicted branches count_ir saw for NAME, in millions.
bcm_of() {
  awk '{ printf "%.2f M", $1 / 1e6 }' "$work/$1.bcm" 2>/dev/null || echo "?"
}

# supports SUBCOMMAND FLAG...: the compactor subcommand exists and its --help
# lists every flag (the command-line skeleton exists before the engines do).
supports() {
  local sub=$1 help
  shift
  help=$("$compactor" "$sub" --help 2>&1) || return 1
  for f in "$@"; do
    grep -q -- "$f" <<<"$help" || return 1
  done
}

# A compactor step may still answer "not built yet" at run time.
not_built() {
  grep -q "not built yet" "$work/$1.log"
}

corpus_bytes() {
  find "$@" -name '*.jsonl' -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }'
}

mbs() { awk -v b="$1" -v s="$2" 'BEGIN { if (s > 0) printf "%.1f", b / 1e6 / s; else print "-" }'; }

# Awk functions that show a ratio to two decimals on the side of its verdict,
# so a shown value never contradicts it (0.799 against ">= 0.8" shows as
# 0.79, not 0.80 MISS): `down` for ">=" and "<" targets, `up` for "<=".
SHOWN='function down(r,  x) { x = r * 100 + 1e-9; return int(x) / 100 }
function up(r,  x) { x = r * 100 - 1e-9; return (int(x) + (x > int(x))) / 100 }'

# Compactions a replay applied: the `compactions` column of its sessions.csv,
# summed ("?" when the file or the column is missing).
compactions_in() {
  awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "compactions") c = i; next }
    c { n += $c } END { if (c) print n + 0; else print "?" }' "$1/sessions.csv" 2>/dev/null || echo "?"
}

# The linearity note: what grew between the two sessions besides the time.
# Each applied compaction is scored (its reference rows too), so a session
# whose first compaction comes late has fewer of them per byte than one
# four times as long.
linearity_note() {
  local c1 c4
  c1=$(compactions_in "$work/out-n")
  c4=$(compactions_in "$work/out-n4")
  notes+=("$(awk -v b1="$bn" -v b4="$bn4" -v c1="$c1" -v c4="$c4" -v r="$1" -v what="$2" 'BEGIN {
    printf "4N against N: %.2fx the bytes, compactions %s -> %s", b4 / b1, c1, c4
    if (c1 + 0 > 0) printf " (%.2fx)", c4 / c1
    printf "; %s per byte: %.2fx", what, r * b1 / b4 }')")
}

rows=()
notes=()
row() { rows+=("$(printf '%-44s %9s %9s  %-36s %8s' "$1" "$2" "$3" "$4" "$5")"); }

print_table() {
  printf '\n%-44s %9s %9s  %-36s %8s\n' "step" "seconds" "MB/s" "ratio (target)" "peak MB"
  printf '%s\n' "$(printf '%.0s-' {1..112})"
  if [[ $mode == corpus ]]; then
    # Rows are collected in run order; show them in the issue's (a)..(g) order.
    printf '%s\n' "${rows[@]}" | sort
  else
    printf '%s\n' "${rows[@]}"
  fi
  if ((${#notes[@]})); then
    printf '\n'
    printf '%s\n' "${notes[@]}"
  fi
}

# sweep_step LABEL JOBS...: (h) on the real corpus, replay and sweep each
# BENCH_REPEAT times with the given --jobs flags (none = all cores), medians.
sweep_step() {
  local label=$1 corpus=${COMPACTOR_CORPUS:-../shared/corpus} n=${BENCH_REPEAT:-5} i
  shift
  local jobs=("$@")
  if [[ ! -d $corpus ]]; then
    row "(h) sweep $label" "-" "-" "skipped: no corpus at $corpus" "-"
    return
  fi
  if ! supports sweep --grid; then
    row "(h) sweep $label" "-" "-" "skipped: compactor sweep not built" "-"
    return
  fi
  local cb ts=() tr=() tb=() src=0 base=()
  cb=$(corpus_bytes "$corpus")
  cat_corpus "$corpus"
  mapfile -t base < <(grid_base_flags grids/default.toml)
  for ((i = 0; i < n; i++)); do
    run_step sweep-replay "$compactor" replay "$corpus" --preset default "${jobs[@]}" --quiet --out "$work/out-h-replay"
    tr+=("$secs")
    src=$((src + rc))
    run_step sweep-replay-base "$compactor" replay "$corpus" --preset default "${base[@]}" "${jobs[@]}" --quiet \
      --out "$work/out-h-replay-base"
    tb+=("$secs")
    src=$((src + rc))
    run_step sweep "$compactor" sweep "$corpus" --grid grids/default.toml "${jobs[@]}" --quiet --out "$work/out-h-sweep"
    ts+=("$secs")
    src=$((src + rc))
  done
  if ((src != 0)); then
    row "(h) sweep $label" "$secs" "-" "FAILED" "$rss"
    notes+=("(h) failed: $(tail -n 3 "$work/sweep.log" | tr '\n' ' ') $(tail -n 3 "$work/sweep-replay.log" | tr '\n' ' ')")
    return
  fi
  local mr mb ms point points verdict
  mr=$(median "${tr[@]}")
  mb=$(median "${tb[@]}")
  ms=$(median "${ts[@]}")
  point=$(grid_point_of "$work/out-h-replay-base/sessions.csv" "$work/out-h-sweep/sweep.csv")
  points=$(($(wc -l <"$work/out-h-sweep/sweep.csv") - 1))
  if [[ -n $point ]]; then
    verdict=$(awk -v a="$ms" -v b="$mb" -v p="$point" \
      "$SHOWN"' BEGIN { r = a / b; printf "%.2fx time of point %s (< 3) %s", down(r), p, (r < 3 ? "ok" : "MISS") }')
  else
    verdict="n/a: that replay is no point of the grid"
  fi
  row "(h) replay default + grid [base], $label" "$mb" "$(mbs "$cb" "$mb")" "median of $n; = point ${point:-none}" "-"
  row "(h) sweep $points points, real corpus, $label" "$ms" "$(mbs "$cb" "$ms")" "$verdict" "$rss"
  row "(h) replay default (200K), $label" "$mr" "$(mbs "$cb" "$mr")" \
    "$(awk -v a="$ms" -v b="$mr" 'BEGIN { printf "sweep: %.2fx its time (info)", a / b }')" "-"
  notes+=("(h) $label runs (s), replay + grid [base] (${base[*]}): ${tb[*]}; sweep: ${ts[*]}; replay default: ${tr[*]}")
}

# grid_point_of SESSIONS_CSV SWEEP_CSV: the sweep points whose totals (calls,
# billed input under the policy, compactions) equal the replay's sessions
# summed, joined by "/" (points that differ only where no session is
# affected tie), or nothing. Columns are found by their header names; fields
# are split at every comma, so a quoted comma (a session path holding one)
# misaligns its row, and the sums then match no point.
grid_point_of() {
  awk -F, 'FNR == 1 { split("", col); for (i = 1; i <= NF; i++) col[$i] = i; next }
    FILENAME == ARGV[1] { c += $col["calls"]; t += $col["input_tokens_policy"]; k += $col["compactions"]; next }
    $col["calls"] == c && $col["input_tokens_policy"] == t && $col["compactions"] == k { m = m (m == "" ? "" : "/") $col["point"] }
    END { if (m != "") print m }' "$1" "$2"
}

# median X...: the middle value; for an even count, the mean of the two middle ones.
median() {
  printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

# grid_base_flags FILE: the [base] table of a grid file as `--set key=value`
# lines, one word a line (quotes dropped): the policy every point starts from.
grid_base_flags() {
  awk '/^[[:space:]]*\[/ { inbase = ($0 ~ /^[[:space:]]*\[base\][[:space:]]*$/); next }
    inbase && /=/ && !/^[[:space:]]*#/ {
      key = $0; sub(/[[:space:]]*=.*/, "", key); gsub(/["[:space:]]/, "", key)
      val = $0; sub(/^[^=]*=[[:space:]]*/, "", val); sub(/[[:space:]]*(#.*)?$/, "", val); gsub(/"/, "", val)
      print "--set"; print key "=" val
    }' "$1"
}

cat_corpus() { find "$1" \( -name '*.jsonl' -o -name '*.json' \) -print0 | xargs -0 cat >/dev/null; }
export -f cat_corpus

if [[ $mode == sweep ]]; then
  echo "sweep step on ${COMPACTOR_CORPUS:-../shared/corpus}; $(nproc) cores; $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
  sweep_step "all cores"
  sweep_step "-j1" --jobs 1
  print_table
  exit 0
fi

if [[ $mode == linearity ]]; then
  n=$turns
  n4=$((turns * 4))
  "$bench" gen-session --turns "$n" --seed "$seed" --out "$work/lin/n.jsonl" >&2
  "$bench" gen-session --turns "$n4" --seed "$seed" --out "$work/lin/n4.jsonl" >&2
  bn=$(corpus_bytes "$work/lin/n.jsonl")
  bn4=$(corpus_bytes "$work/lin/n4.jsonl")
  echo "linearity: $n turns = $((bn / 1000)) KB, $n4 turns = $((bn4 / 1000)) KB (seed $seed)"

  run_step floor-n "$bench" parse-floor "$work/lin/n.jsonl"
  tf1=$secs
  row "parse-floor, $n turns" "$secs" "$(mbs "$bn" "$secs")" "" "$rss"
  run_step floor-n4 "$bench" parse-floor "$work/lin/n4.jsonl"
  row "parse-floor, $n4 turns" "$secs" "$(mbs "$bn4" "$secs")" \
    "$(awk -v a="$secs" -v b="$tf1" 'BEGIN { printf "%.2fx time of n (~4)", a / b }')" "$rss"

  replay=("$compactor" replay --preset default --estimator chars4 --summarizer extractive --jobs 1 --quiet)
  if ! supports replay --preset --estimator --summarizer --jobs; then
    notes+=("skipped: compactor replay not built (its --help lacks --preset/--estimator/--summarizer/--jobs)")
  elif [[ ${BENCH_COUNT:-time} == instructions ]]; then
    if have_valgrind; then
      # A failed count is a note, not the end of the script (set -e).
      ir1=$(count_ir ir-n "${replay[@]}" --out "$work/out-n" "$work/lin/n.jsonl") || ir1=""
      ir4=$(count_ir ir-n4 "${replay[@]}" --out "$work/out-n4" "$work/lin/n4.jsonl") || ir4=""
      if [[ -z $ir1 || -z $ir4 ]]; then
        notes+=("replay failed under valgrind: $(tail -q -n 3 "$work/ir-n.log" "$work/ir-n4.log" 2>/dev/null | tr '\n' ' ')")
      else
        row "replay chars4, $n turns (instructions)" "-" "-" "$ir1 Ir" "-"
        row "replay chars4, $n4 turns (instructions)" "-" "-" \
          "$(awk -v a="$ir4" -v b="$ir1" "$SHOWN"' BEGIN { r = a / b; printf "%.2fx Ir of n (<= 4.5) %s", up(r), (r <= 4.5 ? "ok" : "MISS") }')" "-"
        linearity_note "$(awk -v a="$ir4" -v b="$ir1" 'BEGIN { print a / b }')" "instructions"
      fi
    fi
  else
    run_step replay-n "${replay[@]}" --out "$work/out-n" "$work/lin/n.jsonl"
    t1=$secs
    r1=$rc
    row "replay chars4, $n turns" "$secs" "$(mbs "$bn" "$secs")" "" "$rss"
    run_step replay-n4 "${replay[@]}" --out "$work/out-n4" "$work/lin/n4.jsonl"
    if ((r1 != 0 || rc != 0)); then
      notes+=("replay failed (exit $r1 / $rc): $(tail -n 3 "$work/replay-n4.log" | tr '\n' ' ')")
    else
      row "replay chars4, $n4 turns" "$secs" "$(mbs "$bn4" "$secs")" \
        "$(awk -v a="$secs" -v b="$t1" "$SHOWN"' BEGIN { r = a / b; printf "%.2fx time of n (<= 4.5) %s", up(r), (r <= 4.5 ? "ok" : "MISS") }')" "$rss"
      linearity_note "$(awk -v a="$secs" -v b="$t1" 'BEGIN { print a / b }')" "time"
    fi
  fi
  print_table
  exit 0
fi

# ---------------------------------------------------------------- corpus mode
corpus=$cache/corpus-$size-seed$seed
"$bench" gen --out "$corpus" --size "$size" --seed "$seed" >&2
bytes=$(corpus_bytes "$corpus")
files=$(find "$corpus" -name '*.jsonl' | wc -l)
largest=$(find "$corpus" -name '*.jsonl' -printf '%s\n' | sort -n | tail -n 1)
echo "corpus: $corpus: $files sessions, $(awk -v b="$bytes" 'BEGIN { printf "%.1f", b / 1e6 }') MB (largest $(awk -v b="$largest" 'BEGIN { printf "%.1f", b / 1e6 }') MB); $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg); $(git rev-parse --short HEAD 2>/dev/null || echo '?')"

if [[ $mode == memory ]]; then
  if ! $have_time; then
    echo "--memory needs GNU time at /usr/bin/time" >&2
    exit 2
  fi
  run_step memory "$compactor" replay --preset default --estimator chars4 --summarizer extractive --quiet \
    --out "$work/out-m" "$corpus"
  if ((rc != 0)); then
    notes+=("replay failed (exit $rc): $(tail -n 3 "$work/memory.log" | tr '\n' ' ')")
  else
    row "replay default, chars4, all cores" "$secs" "$(mbs "$bytes" "$secs")" \
      "$(awk -v r="$rss" 'BEGIN { printf "peak %d MB (< 1024) %s", r, (r < 1024 ? "ok" : "MISS") }')" "$rss"
  fi
  print_table
  exit 0
fi

if [[ $mode == shards ]]; then
  n=${BENCH_SHARDS:-4}
  rounds=${BENCH_REPEAT:-3}
  flags=(replay --preset default --preset opal --quiet)
  cat_corpus "$corpus"
  # one_run: the whole replay; split_run: the shards one after another, then
  # the merge of their partials (given in reverse). Each sets its times.
  one_run() {
    rm -rf "$work/one"
    run_step one "$compactor" "${flags[@]}" --out "$work/one" "$corpus"
    ((rc == 0)) || { echo "replay failed: $(tail -n 3 "$work/one.log")" >&2; exit 1; }
    t_ones+=("$secs") rss_one=$rss
  }
  split_run() {
    local k total=0 parts=()
    for ((k = 1; k <= n; k++)); do
      rm -rf "$work/part$k"
      run_step "shard$k" "$compactor" "${flags[@]}" --shard "$k/$n" --out "$work/part$k" "$corpus"
      ((rc == 0)) || { echo "shard $k/$n failed: $(tail -n 3 "$work/shard$k.log")" >&2; exit 1; }
      total=$(awk -v a="$total" -v b="$secs" 'BEGIN { print a + b }')
      rss_shards=$(awk -v a="$rss_shards" -v b="$rss" 'BEGIN { print (b > a ? b : a) }')
      parts=("$work/part$k" "${parts[@]}")
    done
    rm -rf "$work/merged"
    run_step merge "$compactor" merge --quiet --out "$work/merged" "${parts[@]}"
    ((rc == 0)) || { echo "merge failed: $(tail -n 3 "$work/merge.log")" >&2; exit 1; }
    t_shards+=("$total") t_merges+=("$secs") rss_merge=$rss
    t_splits+=("$(awk -v a="$total" -v b="$secs" 'BEGIN { print a + b }')")
  }
  t_ones=() t_shards=() t_merges=() t_splits=() rss_shards=0
  for ((r = 1; r <= rounds; r++)); do
    if ((r % 2)); then one_run; split_run; else split_run; one_run; fi
  done
  ratios=() shares=()
  for ((r = 0; r < rounds; r++)); do
    ratios+=("$(awk -v a="${t_splits[r]}" -v b="${t_ones[r]}" 'BEGIN { print a / b }')")
    shares+=("$(awk -v a="${t_merges[r]}" -v b="${t_splits[r]}" 'BEGIN { print 100 * a / b }')")
  done
  t_one=$(median "${t_ones[@]}") t_split=$(median "${t_splits[@]}")
  row "one process (median of $rounds)" "$t_one" "$(mbs "$bytes" "$t_one")" "" "$rss_one"
  row "$n shards, one after another" "$(median "${t_shards[@]}")" "" "" "$rss_shards"
  row "merge of the $n partials" "$(median "${t_merges[@]}")" "" "" "$rss_merge"
  row "$n shards + merge" "$t_split" "$(mbs "$bytes" "$t_split")" \
    "$(awk -v a="$(median "${ratios[@]}")" 'BEGIN { printf "%.2fx time of one process", a }')" \
    "$(awk -v a="$rss_shards" -v b="$rss_merge" 'BEGIN { print (b > a ? b : a) }')"
  notes+=("rounds alternate which goes first; split/one per round: $(printf '%.2f ' "${ratios[@]}")")
  notes+=("merge: $(awk -v m="$(median "${shares[@]}")" 'BEGIN { printf "%.1f %%", m }') of the split run's time (median); peak RSS one process $rss_one MB, largest shard $rss_shards MB, merge $rss_merge MB")
  if diff -r -q "$work/one" "$work/merged" >/dev/null; then
    notes+=("merged outputs byte-identical to the single run's ($(find "$work/merged" -type f | wc -l) files)")
  else
    notes+=("MISMATCH: $(diff -r -q "$work/one" "$work/merged" | head -n 3 | tr '\n' ' ')")
  fi
  print_table
  exit 0
fi

# Warm the page cache so every step reads from memory.
cat_corpus "$corpus"

run_step cat bash -c 'cat_corpus "$1"' _ "$corpus"
row "(a) cat (I/O floor)" "$secs" "$(mbs "$bytes" "$secs")" "" "$rss"

run_step floor "$bench" parse-floor "$corpus"
t_floor=$secs
row "(b) parse floor, serde typed, 1 thread" "$secs" "$(mbs "$bytes" "$secs")" "" "$rss"
notes+=("$(grep 'parse-floor:' "$work/floor.log" | tail -n 1)")

run_step o200k "$bench" count-o200k "$corpus"
t_o200k=$secs
row "(e) raw o200k counting, 1 thread" "$secs" "$(mbs "$bytes" "$secs")" "" "$rss"
notes+=("$(grep 'count-o200k:' "$work/o200k.log" | head -n 1)")
notes+=("$(grep 'count-o200k:' "$work/o200k.log" | tail -n 1)")

run_step o200k-cache "$bench" count-o200k --piece-cache "$corpus"
row "(e') (e) with the piece cache (info)" "$secs" "$(mbs "$bytes" "$secs")" \
  "$(awk -v a="$secs" -v b="$t_o200k" 'BEGIN { printf "%.2fx time of (e)", a / b }')" "$rss"

# ratio_row LABEL NAME KIND BASE TARGET: KIND "thr" compares throughputs
# (BASE time / own time, higher is better), "time" own time / BASE time (lower is
# better), "speedup" BASE time / own time as a speed-up; TARGET "info" shows a
# throughput ratio against KIND (the base's name) with no target.
ratio_row() {
  local label=$1 name=$2 kind=$3 base=$4 target=$5 ratio
  if ((rc != 0)); then
    if not_built "$name"; then
      row "$label" "-" "-" "skipped: not built yet" "-"
    else
      row "$label" "$secs" "-" "FAILED (exit $rc)" "$rss"
      notes+=("$label failed: $(tail -n 3 "$work/$name.log" | tr '\n' ' ')")
    fi
    return
  fi
  ratio=$(awk -v own="$secs" -v base="$base" -v kind="$kind" -v t="$target" "$SHOWN"' BEGIN {
    if (kind == "time") { r = own / base; ok = r <= t; printf "%.2fx time of (c) (<= %s) %s", up(r), t, ok ? "ok" : "MISS" }
    else if (kind == "speedup") { r = base / own; ok = r >= t; printf "%.2fx speed-up (>= %s) %s", down(r), t, ok ? "ok" : "MISS" }
    else if (t == "info") { printf "%.2fx of %s (info)", base / own, kind }
    else { r = base / own; ok = r >= t; printf "%.2fx of %s (>= %s) %s", down(r), kind, t, ok ? "ok" : "MISS" }
  }')
  row "$label" "$secs" "$(mbs "$bytes" "$secs")" "$ratio" "$rss"
}

# pairs_row LABEL TARGET UNIT WHAT BASE_STEP OWN_STEP [cost]: BENCH_PAIRS
# times, the command in pair_base and the one in pair_own, back to back (two
# runs back to back meet the same load on a shared host); the row is the median
# of the pairs' ratios, base time / own time, against TARGET (at least); with
# "cost", own time / base time, against TARGET (at most).
pairs_row() {
  local label=$1 target=$2 unit=$3 what=$4 base_step=$5 own_step=$6 kind=${7:-thr}
  local pairs=${BENCH_PAIRS:-4} i tb to prc=0 pm ratios=() runs=()
  ((pairs > 0)) || return 0
  for ((i = 0; i < pairs; i++)); do
    # Which runs first alternates: a run right after a long one of the other
    # kind can be slower (measured: (d) took 5.3-6.1 s right after (e), and
    # 4.9-5.4 s right after another (d)), and one fixed order would tilt
    # every pair the same way.
    if ((i % 2 == 0)); then
      run_step "$base_step" "${pair_base[@]}"
      tb=$secs
      prc=$((prc + rc))
      run_step "$own_step" "${pair_own[@]}"
      to=$secs
    else
      run_step "$own_step" "${pair_own[@]}"
      to=$secs
      prc=$((prc + rc))
      run_step "$base_step" "${pair_base[@]}"
      tb=$secs
    fi
    prc=$((prc + rc))
    ratios+=("$(awk -v b="$tb" -v o="$to" -v k="$kind" 'BEGIN { printf "%.2f", k == "cost" ? o / b : b / o }')")
    runs+=("$tb/$to")
  done
  if ((prc != 0)); then
    # A failed run's time is no measurement: no ratio from it.
    row "$label, $pairs pairs" "-" "-" "FAILED" "-"
    notes+=("$label failed: $(tail -n 3 "$work/$base_step.log" | tr '\n' ' ') $(tail -n 3 "$work/$own_step.log" | tr '\n' ' ')")
    return 0
  fi
  pm=$(median "${ratios[@]}")
  row "$label, $pairs pairs" "-" "-" \
    "$(awk -v r="$pm" -v t="$target" -v u="$unit" -v k="$kind" "$SHOWN"' BEGIN {
      if (k == "cost") printf "median %.2fx %s (<= %s) %s", up(r), u, t, (r <= t ? "ok" : "MISS")
      else printf "median %.2fx %s (>= %s) %s", down(r), u, t, (r >= t ? "ok" : "MISS") }')" "-"
  notes+=("${label%% *} pairs, $what: ${runs[*]}; ratios: ${ratios[*]}")
}

replay_flags=(--preset --estimator --summarizer --jobs)
if supports replay "${replay_flags[@]}"; then
  replay=("$compactor" replay --preset default --summarizer extractive --quiet)
  run_step replay-c "${replay[@]}" --estimator chars4 --jobs 1 --out "$work/out-c" "$corpus"
  t_c=$secs
  rc_c=$rc
  ratio_row "(c) replay default, chars4, extractive, -j1" replay-c "(b)" "$t_floor" 0.6
  run_step replay-c0 "${replay[@]}" --estimator chars4 --jobs 1 --no-quality --out "$work/out-c0" "$corpus"
  t_c0=$secs
  rc_c0=$rc
  ratio_row "(c0) (c) with --no-quality" replay-c0 "(b)" "$t_floor" 0.35
  if ((rc_c == 0 && rc_c0 == 0)); then
    row "(q) quality pass: (c) against (c0)" "-" "-" "$(awk -v c="$t_c" -v c0="$t_c0" "$SHOWN"' BEGIN {
      r = c / c0; printf "%.2fx time of (c0) (<= 2) %s", up(r), (r <= 2 ? "ok" : "MISS") }')" "-"
  fi
  # (b) against (c0), and (c0) against (c), back to back: the two ratios
  # issue 42 sets, each a pair of runs that meet the same load.
  if ((rc_c0 == 0)); then
    pair_base=("$bench" parse-floor "$corpus")
    pair_own=("${replay[@]}" --estimator chars4 --jobs 1 --no-quality --out "$work/out-c0" "$corpus")
    pairs_row "(c0') (b) and (c0) back to back" 0.35 "of (b)" "(b) s / (c0) s" floor-pair replay-c0-pair
    if ((rc_c == 0)); then
      pair_base=("${replay[@]}" --estimator chars4 --jobs 1 --no-quality --out "$work/out-c0" "$corpus")
      pair_own=("${replay[@]}" --estimator chars4 --jobs 1 --out "$work/out-c" "$corpus")
      pairs_row "(q') (c0) and (c) back to back" 2 "time of (c0)" "(c0) s / (c) s" replay-c0-pair replay-c-pair cost
    fi
  fi
  run_step replay-d "${replay[@]}" --estimator o200k --jobs 1 --out "$work/out-d" "$corpus"
  rc_d=$rc
  ratio_row "(d) replay default, o200k, extractive, -j1" replay-d "(e)" "$t_o200k" 0.8
  # (e) and (d) again, BENCH_PAIRS times back to back: on a shared host a
  # single pair is noise (raw counting alone has run from 2.9 s to 5.2 s on
  # one corpus within minutes), and two runs back to back meet the same load.
  if ((rc_d == 0)); then
    pair_base=("$bench" count-o200k "$corpus")
    pair_own=("${replay[@]}" --estimator o200k --jobs 1 --out "$work/out-d" "$corpus")
    pairs_row "(d') (d) and (e) back to back" 0.8 "of (e)" "(e) s / (d) s" o200k-pair replay-d-pair
  fi
  if ((rc_c == 0)); then
    run_step replay-g "${replay[@]}" --estimator chars4 --jobs 2 --out "$work/out-g" "$corpus"
    ratio_row "(g) (c) with --jobs 2" replay-g speedup "$t_c" 1.8
    # The same for the speed-up: a neighbour's load during one of the two
    # runs alone moved (g) from 1.5x to 2.4x across runs of one build.
    pair_base=("${replay[@]}" --estimator chars4 --jobs 1 --out "$work/out-c" "$corpus")
    pair_own=("${replay[@]}" --estimator chars4 --jobs 2 --out "$work/out-g" "$corpus")
    pairs_row "(g') (c) and (g) back to back" 1.8 speed-up "-j1 s / -j2 s" replay-c-pair replay-g-pair
  fi
else
  row "(c) replay default, chars4, extractive, -j1" "-" "-" "skipped: compactor replay not built" "-"
  row "(d) replay default, o200k, extractive, -j1" "-" "-" "skipped: compactor replay not built" "-"
  row "(g) (c) with --jobs 2" "-" "-" "skipped: compactor replay not built" "-"
  t_c=""
fi

n_presets=$(wc -w <<<"$presets")
if supports compare --preset --estimator --summarizer --jobs && [[ -n $t_c ]]; then
  preset_args=()
  for p in $presets; do preset_args+=(--preset "$p"); done
  run_step compare "$compactor" compare "${preset_args[@]}" --estimator chars4 --summarizer extractive \
    --jobs 1 --quiet --out "$work/out-f" "$corpus"
  ratio_row "(f) compare, $n_presets presets, chars4, -j1" compare time "$t_c" 1.5
else
  row "(f) compare, $n_presets presets, chars4, -j1" "-" "-" "skipped: compactor compare not built" "-"
fi

# ir_row LABEL NAME IR BASE_IR KIND TARGET AGAINST: a step counted in
# instructions, against the step named AGAINST (whose count is BASE_IR). KIND
# "thr": BASE_IR / IR (an instruction throughput ratio, at least TARGET);
# "cost": IR / BASE_IR (at most TARGET); TARGET "info" gives no verdict.
ir_row() {
  local label=$1 name=$2 ir=$3 base=$4 kind=$5 target=$6 against=$7
  if [[ -z $ir || -z $base ]]; then
    row "$label" "-" "-" "FAILED: $(tail -n 1 "$work/$name.log" 2>/dev/null)" "-"
    return
  fi
  row "$label" "-" "-" "$(awk -v ir="$ir" -v b="$base" -v k="$kind" -v t="$target" -v a="$against" "$SHOWN"' BEGIN {
    printf "%.0f M Ir, ", ir / 1e6
    if (k == "cost") { r = ir / b; printf "%.2fx of %s", up(r), a; if (t != "info") printf " (<= %s) %s", t, (r <= t ? "ok" : "MISS") }
    else { r = b / ir; printf "%.2fx of %s", down(r), a; if (t != "info") printf " (>= %s) %s", t, (r >= t ? "ok" : "MISS") }
    if (t == "info") printf " (info)" }')" "-"
}

# Instruction counts of the steps whose targets are ratios: unlike wall time
# on a shared host, they repeat run to run (to about 0.1 %), so a change of a
# few percent shows. Outputs go where the timed steps wrote theirs.
if [[ ${BENCH_COUNT:-time} == instructions ]]; then
  if [[ -n $t_c ]] && have_valgrind; then
    ir_b=$(count_ir ir-floor "$bench" parse-floor "$corpus") || ir_b=""
    ir_e=$(count_ir ir-o200k "$bench" count-o200k "$corpus") || ir_e=""
    ir_c=$(count_ir ir-c "${replay[@]}" --estimator chars4 --jobs 1 --out "$work/out-c" "$corpus") || ir_c=""
    ir_c0=$(count_ir ir-c0 "${replay[@]}" --estimator chars4 --jobs 1 --no-quality --out "$work/out-c0" "$corpus") || ir_c0=""
    ir_d=$(count_ir ir-d "${replay[@]}" --estimator o200k --jobs 1 --out "$work/out-d" "$corpus") || ir_d=""
    row "(b) in instructions" "-" "-" "$(awk -v i="$ir_b" -v b="$bytes" 'BEGIN {
      if (i == "") print "FAILED"; else printf "%.0f M Ir, %.1f Ir a byte", i / 1e6, i / b }')" "-"
    row "(e) in instructions" "-" "-" "$(awk -v i="$ir_e" 'BEGIN { if (i == "") print "FAILED"; else printf "%.0f M Ir", i / 1e6 }')" "-"
    ir_row "(c) in instructions" ir-c "$ir_c" "$ir_b" thr 0.6 "(b)"
    ir_row "(c0) in instructions" ir-c0 "$ir_c0" "$ir_b" thr 0.35 "(b)"
    ir_row "(q) in instructions" ir-c "$ir_c" "$ir_c0" cost 2 "(c0)"
    ir_row "(d) in instructions" ir-d "$ir_d" "$ir_e" thr 0.8 "(e)"
    if supports compare --preset --estimator --summarizer --jobs; then
      ir_f=$(count_ir ir-f "$compactor" compare "${preset_args[@]}" --estimator chars4 --summarizer extractive \
        --jobs 1 --quiet --out "$work/out-f" "$corpus") || ir_f=""
      ir_row "(f) in instructions" ir-f "$ir_f" "$ir_c" cost 1.5 "(c)"
    fi
    notes+=("mispredicted branches (cachegrind): (b) $(bcm_of ir-floor), (c) $(bcm_of ir-c), (c0) $(bcm_of ir-c0), (d) $(bcm_of ir-d), (e) $(bcm_of ir-o200k), (f) $(bcm_of ir-f)")
  fi
fi

sweep_step "all cores"
sweep_step "-j1" --jobs 1

print_table
