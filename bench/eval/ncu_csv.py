"""Reads the CSVs `ncu --csv` wrote into a folder, one file per profiled run (TAG.csv), for the
Nsight Compute scripts of bench/eval (texture_ncu.sh, window_ncu.sh)."""
import csv
import glob
import os


def load(folder):
    """{tag: {metric name: value as ncu printed it}}, tags sorted; "Kernel Name" holds the
    profiled kernel's (its instantiation: a DynamicAccessor one runs through the dynamic
    accessor)."""
    runs = {}
    for f in sorted(glob.glob(os.path.join(folder, "*.csv"))):
        tag = os.path.basename(f)[:-4]
        with open(f) as fh:
            lines = [line for line in fh if line.startswith('"')]
        for r in csv.DictReader(lines):
            run = runs.setdefault(tag, {})
            run[r["Metric Name"]] = r["Metric Value"]
            run["Kernel Name"] = r.get("Kernel Name", "")
    return runs


def number(text):
    """A metric value as a float (ncu groups thousands with commas); NaN if not a number."""
    try:
        return float(text.replace(",", ""))
    except (AttributeError, ValueError):
        return float("nan")
