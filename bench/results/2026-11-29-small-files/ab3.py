"""Interleaved per repetition: the kernel's epoch, the hdf5 loop over the sorted list, the hdf5 loop in the kernel's
order (order.sh). usage: ab3.py N REPS [kernel]; datasets in /tmp/sm/dN, lists /tmp/sm/lN.txt, /tmp/sm/korderN.txt."""
import json
import os
import statistics
import subprocess
import sys

N, REPS = int(sys.argv[1]), int(sys.argv[2])
K = sys.argv[3] if len(sys.argv) > 3 else "/tmp/wt-small/build/own-hdf5/h5dlio"
LIM = "/tmp/wt-small/build/own-hdf5/h5dlio-limits"
MPI = ["mpirun", "-np", "1", "--allow-run-as-root"]
S = dict(data_folder=f"/tmp/sm/d{N}", naming="dlio", num_files_train=N, num_files_eval=0, num_samples_per_file=1,
         record_length=4096, batch_size=7, read_threads=0, epochs=1, computation_time=0, shuffle="seed",
         keep_files="true", num_subfolders_train=0, quiet="true", generate_data="false", train="true",
         output_folder=f"/tmp/sm/ot{N}")
ARGV = MPI + [K] + [a for k, v in S.items() for a in ("--set", f"{k.replace('_', '-')}={v}")]


def loop(lst):
    p = subprocess.run(MPI + [LIM, "--mode", "hdf5", "--list", lst], check=True, capture_output=True, text=True)
    r = json.loads(p.stdout.strip().splitlines()[-1])
    return r["files"] / r["wall_s"], r["files"] / (r["open_s"] + r["read_s"] + r["close_s"])


def paired(res, a, b):
    p = [x / y for x, y in zip(res[a], res[b], strict=True)]
    return f"{statistics.median(p):.3f} [{min(p):.3f}-{max(p):.3f}]"


res = {"k": [], "kio": [], "s": [], "sio": [], "o": [], "oio": [], "load": []}
for i in range(REPS):
    res["load"].append(os.getloadavg()[0])
    subprocess.run(ARGV, check=True, capture_output=True)
    e = json.load(open(f"/tmp/sm/ot{N}/output.json"))["train"]["epochs"][0]
    res["k"].append(e["opens"] / e["observed_s"])
    res["kio"].append(e["opens"] / (e["metadata_s_rank_mean"] + e["raw_read_s_rank_mean"]))
    for key, lst in (("s", f"/tmp/sm/l{N}.txt"), ("o", f"/tmp/sm/korder{N}.txt")):
        rate, io = loop(lst)
        res[key].append(rate)
        res[key + "io"].append(io)
    print(f"rep {i} load {res['load'][-1]:.1f}: kernel {res['k'][-1]:.0f}  loop-sorted {res['s'][-1]:.0f}  "
          f"loop-kernel-order {res['o'][-1]:.0f}", flush=True)
m = statistics.median
print(f"N={N} medians: kernel {m(res['k']):.0f} sorted {m(res['s']):.0f} korder {m(res['o']):.0f}; "
      f"paired kernel/sorted {paired(res, 'k', 's')} kernel/korder {paired(res, 'k', 'o')} "
      f"korder/sorted {paired(res, 'o', 's')}; io: kernel/sorted {paired(res, 'kio', 'sio')} "
      f"kernel/korder {paired(res, 'kio', 'oio')}; load {min(res['load']):.1f}-{max(res['load']):.1f}")
json.dump(res, open(f"/tmp/sm/ab3-{N}-{os.getpid()}.json", "w"))
