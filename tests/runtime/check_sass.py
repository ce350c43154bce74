#!/usr/bin/env python3
"""Checks the SASS of the rewritten kernels: every instantiation that uses a place must contain
that place's instructions (constant: LDC/ULDC c[0x3]; read-only: LDG.E...CONSTANT; texture:
TEX/TLD; shared: LDS/STS), and the default instantiation (every array global) must be the
original kernel's code, instruction for instruction. Usage: check_sass.py CUOBJDUMP OBJ..."""
import re
import subprocess
import sys

PLACE_PATTERNS = {
    "ConstantAccessor": (r"\bU?LDC(\.\w+)* [^,]+, c\[0x3\]", "constant load LDC/ULDC c[0x3]"),
    "ReadOnlyAccessor": (r"\bLDG\.E(\.\w+)*\.CONSTANT\b", "read-only load LDG.E.CONSTANT"),
    "TextureAccessor": (r"\b(TEX|TLD)(\.\w+)*\b", "texture fetch TEX/TLD"),
    "Texture2DAccessor": (r"\b(TEX|TLD)(\.\w+)*\b", "texture fetch TEX/TLD"),
    "SharedAccessor": (r"\b(LDS|STS)(\.\w+)*\b", "shared load/store LDS/STS"),
}
OTHER = ["ReadOnlyAccessor", "TextureAccessor", "Texture2DAccessor", "ConstantAccessor",
         "SharedAccessor", "L2PersistAccessor", "DynamicAccessor", "TracingAccessor"]


def functions(cuobjdump, obj):
    text = subprocess.run([cuobjdump, "-sass", obj], check=True, capture_output=True,
                          text=True).stdout
    out = {}
    name = None
    for line in text.splitlines():
        m = re.search(r"Function : (\S+)", line)
        if m:
            name = m.group(1)
            out[name] = []
            continue
        m = re.match(r"\s+/\*[0-9a-f]{4}\*/\s+(.*?)\s*;", line)
        if name and m:
            ins = m.group(1).strip()
            if ins != "NOP":
                out[name].append(ins)
    return out


def base_name(mangled):
    m = re.match(r"_Z(\d+)(\w+)", mangled)
    if not m:
        return mangled
    return m.group(2)[: int(m.group(1))]


def main():
    cuobjdump, objs = sys.argv[1], sys.argv[2:]
    failures = 0
    checked = 0
    for obj in objs:
        funcs = functions(cuobjdump, obj)
        originals = {base_name(f)[: -len("_original")]: code for f, code in funcs.items()
                     if base_name(f).endswith("_original")}
        for f, code in funcs.items():
            sass = "\n".join(code)
            for acc, (pattern, what) in PLACE_PATTERNS.items():
                if acc in f and not re.search(pattern, sass):
                    print(f"FAIL {obj}: {f}: no {what}")
                    failures += 1
                checked += acc in f
            if "DynamicAccessor" in f:
                for acc in ("ConstantAccessor", "ReadOnlyAccessor", "TextureAccessor",
                            "SharedAccessor"):
                    pattern, what = PLACE_PATTERNS[acc]
                    if not re.search(pattern, sass):
                        print(f"FAIL {obj}: {f} (dynamic): no {what}")
                        failures += 1
                checked += 1
            if "TracingAccessor" in f:
                if not re.search(r"\bMATCH\.ANY", sass) or not re.search(r"\bVOTE\.ANY", sass):
                    print(f"FAIL {obj}: {f} (tracing): no MATCH.ANY / VOTE.ANY")
                    failures += 1
                checked += 1
            b = base_name(f)
            if "GlobalAccessor" in f and not any(o in f for o in OTHER) and b in originals:
                checked += 1
                if code == originals[b]:
                    print(f"ok   {b}: default instantiation == original "
                          f"({len(code)} instructions)")
                else:
                    print(f"note {b}: default instantiation differs from the original "
                          f"({len(code)} vs {len(originals[b])} instructions)")
    print(f"check_sass: {checked} checks, {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
