#!/usr/bin/env bash
# Runs the target-related C tests of the OpenMP Validation & Verification suite
# (github.com/OpenMP-Validation-and-Verification/OpenMP_VV) twice — built with plain
# `clang-19 -fopenmp` (the reference: no offload device, so OpenMP runs every target
# region on the host; a test calling the device memory routines gets their host-device
# versions, tests/support/omp_host_device.c) and with `tessera cc` (run on the emulated device) — and
# classifies each test:
#
#   same                     exit status and the suite's [OMPVV_RESULT] verdicts equal
#   differs                  they do not (the detail says how)
#   device-only              the reference skips it (exit 101: it needs a non-host
#                            device, and plain clang has none); Tessera runs and passes it
#   tessera-compile-failure  `tessera cc` rejects a program plain clang compiles
#   ref-failure              plain clang fails to compile it, or its own run fails
#                            (skipped: no verdict to compare against)
#
# The suite prints where its probe region ran ("Test is running on host/device",
# "Test passed on the device"); that legitimately differs and is ignored.
#
# Usage: scripts/run-ovv.sh [options] <checkout> [filter]
#   <checkout>        a checkout of OpenMP_VV (its tests/ and ompvv/ directories)
#   [filter]          Python regular expression searched in the test's path below
#                     tests/ (e.g. '4.5/target_data', 'update')
#   -o, --tsv FILE    write the per-test TSV there (default: stdout, after the summary
#                     on stderr)
#   -j N              tests built and run at once (default 2, at most 2)
#   --timeout S       limit per compile and per run (default 60 s)
#   --work-dir DIR    binaries, outputs, reports, kernel cache (default target/ovv)
#   --list            print the selected tests and exit
#   --no-preflight    skip the check that a trivial region runs on the emulated
#                     device (it catches a broken or half-rebuilt Tessera)
#   --loops           also the directories of the combined loop constructs on
#                     target (target teams distribute [parallel for], target
#                     parallel, target simd): reductions, schedules, collapse,
#                     private clauses — the regions real code offloads
#
# Exit status: 0 when every compared test is `same`, 1 when a test differs or fails to
# build with Tessera (or the script cannot run).
#
# Environment: TESSERA (default target/release/tessera), CLANG (default clang-19).
# Every Tessera run has TESSERA_DEVICE=emu and its own TESSERA_REPORT; the regions
# columns count region executions (report lines without "op") by device, the data
# columns the data directives.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
exec python3 - "$root" "$@" <<'PY'
import argparse, concurrent.futures as cf, json, os, re, shutil, signal, subprocess, sys, time
from collections import Counter
from pathlib import Path

root = Path(sys.argv[1])
ap = argparse.ArgumentParser(prog="scripts/run-ovv.sh",
                             description="OpenMP_VV target tests: plain clang vs tessera cc")
ap.add_argument("checkout")
ap.add_argument("filter", nargs="?")
ap.add_argument("-o", "--tsv")
ap.add_argument("-j", type=int, default=2)
ap.add_argument("--timeout", type=float, default=60.0)
ap.add_argument("--work-dir", default=str(root / "target" / "ovv"))
ap.add_argument("--list", action="store_true")
ap.add_argument("--no-preflight", action="store_true")
ap.add_argument("--loops", action="store_true")
args = ap.parse_args(sys.argv[2:])

checkout = Path(args.checkout).resolve()
tests_dir, inc_dir = checkout / "tests", checkout / "ompvv"
if not (inc_dir / "ompvv.h").is_file() or not tests_dir.is_dir():
    sys.exit(f"run-ovv: {checkout} is not an OpenMP_VV checkout (no ompvv/ompvv.h or tests/)")
tessera = os.environ.get("TESSERA", str(root / "target" / "release" / "tessera"))
clang = os.environ.get("CLANG", "clang-19")
for tool in (tessera, clang):
    if not shutil.which(tool):
        sys.exit(f"run-ovv: {tool} not found (make build; apt-get install clang-19)")
jobs = max(1, min(args.j, 2))

# The target-related subset: the directories of the target constructs and data
# directives in the OpenMP 4.5 and 5.x trees, and every other test of those trees whose
# name says it is about map clauses (map, defaultmap, declare mapper, mapped pointers).
VERSIONS = ("4.5", "5.0", "5.1", "5.2")
DIRS = ("target", "target_data", "target_enter_data", "target_enter_exit_data",
        "target_exit_data", "target_update")
LOOP_DIRS = ("target_teams_distribute", "target_teams_distribute_parallel_for",
             "target_parallel", "target_simd")
if args.loops:
    DIRS = DIRS + LOOP_DIRS
def selected():
    out = []
    for v in VERSIONS:
        for src in sorted((tests_dir / v).rglob("*.c")):
            rel = src.relative_to(tests_dir).as_posix()
            if src.parent.name in DIRS or "map" in src.name:
                if args.filter is None or re.search(args.filter, rel):
                    out.append(rel)
    return out

tests = selected()
if args.list:
    print("\n".join(tests))
    sys.exit(0)
if not tests:
    sys.exit("run-ovv: no test selected")

work = Path(args.work_dir).resolve()
(work / "tests").mkdir(parents=True, exist_ok=True)
cache = work / "cache"
FLAGS = ["-O3", "-DVERBOSE_MODE=1", f"-I{inc_dir}"]

base_env = {k: v for k, v in os.environ.items()
            if not k.startswith("TESSERA_") and k != "OMP_TARGET_OFFLOAD"}

def run(cmd, env=None, cwd=None):
    """(status, stdout, stderr); status: exit code, 'SIGxxx' or 'timeout'."""
    p = subprocess.Popen(cmd, env=env or base_env, cwd=cwd, stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         start_new_session=True)
    try:
        out, err = p.communicate(timeout=args.timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)   # the program and the kernel compiles it started
        out, err = p.communicate()
        return "timeout", out.decode(errors="replace"), err.decode(errors="replace")
    rc = p.returncode
    st = str(rc) if rc >= 0 else signal.Signals(-rc).name
    return st, out.decode(errors="replace"), err.decode(errors="replace")

RUNNING_ON = re.compile(r"Test is running on (host|device)")
WHERE = re.compile(r" on the (host|device)\.")
SHARED = re.compile(r"shared data environment between host and device")
def norm(text):
    """Lines to compare: without the lines that say where the probe ran."""
    return [WHERE.sub(".", l) for l in text.splitlines()
            if not RUNNING_ON.search(l) and not SHARED.search(l)]
def verdicts(text):
    return [WHERE.sub(".", l) for l in text.splitlines() if l.startswith("[OMPVV_RESULT")]
def first_error(text):
    for l in text.splitlines():
        if " error: " in l or l.startswith("error:") or "fatal" in l:
            return l.strip()
    lines = [l for l in text.splitlines() if l.strip()]
    return lines[-1].strip() if lines else ""
def first_diff(a, b):
    for x, y in zip(a, b):
        if x != y:
            return f"ref: {x} | tessera: {y}"
    if len(a) != len(b):
        x = a[len(b)] if len(a) > len(b) else "<end>"
        y = b[len(a)] if len(b) > len(a) else "<end>"
        return f"ref: {x} | tessera: {y}"
    return ""
def short(s, n=200):
    s = s.replace("\t", " ")
    return s if len(s) <= n else s[:n - 3] + "..."

def one(rel):
    name = rel[:-2].replace("/", "__")
    d = work / "tests" / name
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    src = str(tests_dir / rel)
    r = dict(test=rel, verdict="", ref="", tes="", emu=0, host=0, demu=0, dhost=0,
             detail="", reasons=Counter())
    # Device memory routines live in libomptarget, which plain clang links only with
    # offload targets: the reference gets OpenMP's host-device versions of them (its
    # only device is the host), as the differential tests' reference does.
    host_device = []
    text = Path(src).read_text(errors="replace")
    if "omp_target_" in text or "omp_get_mapped_ptr" in text:
        host_device = ["-x", "c", str(root / "tests/support/omp_host_device.c"), "-x", "none"]
    st, o, e = run([clang, "-fopenmp", *FLAGS, src, "-o", str(d / "ref"), "-lm", *host_device])
    (d / "ref.compile.log").write_text(o + e)
    if st != "0":
        r.update(verdict="ref-failure", ref="compile-error", detail=short(first_error(e)))
    else:
        rst, ro, re_ = run([str(d / "ref")], cwd=d)
        (d / "ref.out").write_text(ro); (d / "ref.err").write_text(re_)
        r["ref"] = rst
        rv = verdicts(ro)
        # exit 101 is the suite's "skipped" (OMPVV_SKIPPED_EXIT_CODE -667): a verdict too
        if rst not in ("0", "101") or any("failed" in v for v in rv):
            r.update(verdict="ref-failure",
                     detail=short(first_error(re_) or (rv[0] if rv else "")))
    # A reference failure is skipped, but Tessera still builds and runs it, for the
    # record (its status and regions; the verdict stays ref-failure).
    st, o, e = run([tessera, "cc", *FLAGS, src, "-o", str(d / "tes"), "-lm"])
    (d / "tes.compile.log").write_text(o + e)
    if st != "0":
        if r["verdict"]:
            r["tes"] = "compile-error"
        else:
            r.update(verdict="tessera-compile-failure", tes="compile-error",
                     detail=short(first_error(e)))
        return r
    report = d / "report.jsonl"
    env = dict(base_env, TESSERA_DEVICE="emu", TESSERA_REPORT=str(report),
               TESSERA_CACHE_DIR=str(cache))
    tst, to, te = run([str(d / "tes")], env=env, cwd=d)
    (d / "tes.out").write_text(to); (d / "tes.err").write_text(te)
    r["tes"] = tst
    if report.exists():
        for line in report.read_text().splitlines():
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            data = "op" in rec
            dev = rec.get("device")
            key = ("d" if data else "") + ("emu" if dev == "emu" else "host")
            r[key] += 1
            if dev != "emu" and rec.get("reason"):
                reason = re.sub(r"'[^']*'", "'…'", rec["reason"])
                reason = re.sub(r"\d+", "N", reason)
                r["reasons"][("data: " if data else "") + short(reason, 110)] += 1
    if r["verdict"]:
        return r
    tv = verdicts(to)
    diff = first_diff(norm(ro), norm(to)) or first_diff(norm(re_), norm(te))
    if rst == tst and rv == tv:
        r.update(verdict="same", detail=short(diff))
    elif rst == "101" and tst == "0" and not any("failed" in v for v in tv):
        # The reference skips a test that needs a non-host device (it has none);
        # Tessera, which is one, runs it and passes: nothing to compare.
        r.update(verdict="device-only", detail=short(" ".join(tv) or "passed"))
    else:
        how = []
        if rst != tst:
            how.append(f"status {rst} -> {tst}")
        if rv != tv:
            how.append("verdict " + (" ".join(rv) or "none") + " -> " + (" ".join(tv) or "none"))
        fatal = [l for l in te.splitlines() if l.startswith("tessera")]  # fatal, emu abort
        if fatal:
            how.append(short(fatal[0], 300))
        r.update(verdict="differs", detail=short("; ".join(how) + (f"; first diff: {diff}" if diff else ""), 400))
    return r

PROBE = r"""
#include <stdio.h>
int main(void) {
  int a[64], err = 0;
  for (int i = 0; i < 64; ++i) a[i] = i;
#pragma omp target map(tofrom: a[0:64])
  for (int i = 0; i < 64; ++i) a[i] = 2 * a[i];
  for (int i = 0; i < 64; ++i) err += a[i] != 2 * i;
  return err != 0;
}
"""
def preflight():
    """One trivial region must build and run on the emulated device, else every
    comparison below would only measure a broken or half-rebuilt Tessera."""
    d = work / "preflight"
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    (d / "probe.c").write_text(PROBE)
    st, o, e = run([tessera, "cc", "-O2", str(d / "probe.c"), "-o", str(d / "probe")])
    if st != "0":
        return f"tessera cc failed on a trivial region: {first_error(e)}"
    rep = d / "report.jsonl"
    st, o, e = run([str(d / "probe")], env=dict(base_env, TESSERA_DEVICE="emu",
                   TESSERA_REPORT=str(rep), TESSERA_CACHE_DIR=str(cache)), cwd=d)
    recs = [json.loads(l) for l in rep.read_text().splitlines()] if rep.exists() else []
    if st != "0" or not recs or recs[0].get("device") != "emu":
        why = recs[0].get("reason") if recs else first_error(e)
        return f"a trivial region did not run on the emulated device (status {st}): {why}"
    return None

if not args.no_preflight:
    bad = preflight()
    if bad:
        sys.exit(f"run-ovv: {bad}\n(rebuild with `make build`, or pass --no-preflight)")

t0 = time.time()
results = []
with cf.ThreadPoolExecutor(max_workers=jobs) as pool:
    futs = {pool.submit(one, t): t for t in tests}
    for n, f in enumerate(cf.as_completed(futs), 1):
        try:
            r = f.result()
        except Exception as ex:  # a bug here must not lose the other results
            r = dict(test=futs[f], verdict="error", ref="", tes="", emu=0, host=0, demu=0,
                     dhost=0, detail=short(repr(ex)), reasons=Counter())
        results.append(r)
        print(f"[{n}/{len(tests)}] {r['verdict']:24} {r['test']}", file=sys.stderr, flush=True)
results.sort(key=lambda r: r["test"])
elapsed = time.time() - t0

cols = ["test", "verdict", "ref_status", "tessera_status", "regions_emu", "regions_host",
        "data_ops_emu", "data_ops_host", "detail_or_first_differing_line"]
tsv = ["\t".join(cols)] + ["\t".join(str(x) for x in (
    r["test"], r["verdict"], r["ref"], r["tes"], r["emu"], r["host"], r["demu"], r["dhost"],
    r["detail"].replace("\t", " "))) for r in results]

out = sys.stderr if not args.tsv else sys.stdout
p = lambda *a: print(*a, file=out)
order = ["same", "differs", "device-only", "tessera-compile-failure", "ref-failure", "error"]
groups = sorted({r["test"].rsplit("/", 1)[0] for r in results})
p("\nOpenMP_VV target-related C tests: plain clang-19 -fopenmp vs tessera cc (TESSERA_DEVICE=emu)")
p("(tes-cc: tessera-compile-failure; reg emu/host: region executions of the compared tests)")
p(f"{'directory':44} {'tests':>5} {'same':>5} {'differs':>7} {'tes-cc':>6} {'ref-fail':>8} {'reg emu':>7} {'reg host':>8}")
COMPARED = ("same", "differs")
def row(label, rs):
    c = Counter(r["verdict"] for r in rs)
    cmp_ = [r for r in rs if r["verdict"] in COMPARED]
    p(f"{label:44} {len(rs):>5} {c['same']:>5} {c['differs']:>7} {c['tessera-compile-failure']:>6} "
      f"{c['ref-failure']:>8} {sum(r['emu'] for r in cmp_):>7} {sum(r['host'] for r in cmp_):>8}")
for g in groups:
    row(g, [r for r in results if r["test"].rsplit("/", 1)[0] == g])
row("total", results)
c = Counter(r["verdict"] for r in results)
p("\n" + ", ".join(f"{k}: {c[k]}" for k in order if c[k] or k != "error"))
cmp_ = [r for r in results if r["verdict"] in COMPARED]
p(f"in the {len(cmp_)} compared tests (same + differs): region executions "
  f"{sum(r['emu'] for r in cmp_)} on emu, {sum(r['host'] for r in cmp_)} on host; "
  f"data directives {sum(r['demu'] for r in cmp_)} on emu, {sum(r['dhost'] for r in cmp_)} on host")
reasons = Counter()
for r in cmp_:
    reasons.update(r["reasons"])
if reasons:
    p("\nhost executions by reason (Tessera runs of the compared tests):")
    for k, v in reasons.most_common(15):
        p(f"  {v:5}  {k}")
bad = [r for r in results if r["verdict"] in ("differs", "tessera-compile-failure", "error")]
if bad:
    p("\ndiffering tests and compile failures:")
    for r in bad:
        p(f"  {r['test']}: {r['verdict']}: {r['detail']}")
p(f"\n{len(results)} tests in {elapsed:.0f} s (-j {jobs}); outputs in {work}/tests")
if args.tsv:
    Path(args.tsv).write_text("\n".join(tsv) + "\n")
    p(f"TSV: {args.tsv}")
else:
    sys.stdout.write("\n".join(tsv) + "\n")
sys.exit(1 if bad else 0)
PY
