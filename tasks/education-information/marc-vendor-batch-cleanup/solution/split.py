"""Oracle, step 1: sort the vendor records by their real encoding, for YAZ to convert.

    python3 split.py BATCH.mrc MARC8_OUT.mrc UTF8_OUT.mrc [--trust-leader]

Leader/09 'a' means UTF-8. A blank leader/09 is trusted only when the record is not valid
UTF-8 with non-ASCII bytes (MARC-8 diacritics are never valid UTF-8 sequences).
"""

import sys

data = open(sys.argv[1], "rb").read()
marc8, utf8 = open(sys.argv[2], "wb"), open(sys.argv[3], "wb")
for chunk in data.split(b"\x1d"):
    if not chunk.strip():
        continue
    rec = chunk + b"\x1d"
    is_utf8 = rec[9:10] == b"a"
    # --trust-leader builds a negative fixture: leader/09 taken at its word.
    if not is_utf8 and not rec.isascii() and "--trust-leader" not in sys.argv:
        try:
            rec.decode("utf-8")
            is_utf8 = True
        except UnicodeDecodeError:
            pass
    (utf8 if is_utf8 else marc8).write(rec)
