#!/bin/bash
# Oracle for usb-exfiltration-triage: The Sleuth Kit on the split raw image, file(1) for
# signatures, the workstation's time zone (America/Chicago, DST on) for the FAT local times.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out=/task/output
work=$(mktemp -d)
mkdir -p "$out/recovered"
segs=(/task/inputs/evidence/HPW-USB-01.0*)

cat "${segs[@]}" > "$work/image.dd"
md5sum "$work/image.dd" | cut -d' ' -f1 > "$work/md5"
sha256sum "$work/image.dd" | cut -d' ' -f1 > "$work/sha256"

# Partition table: the start of the FAT partition.
mmls "${segs[@]}" | awk '/FAT/ {print $3+0; exit}' > "$work/offset"
off=$(cat "$work/offset")
fsstat -o "$off" "${segs[@]}" | awk -F': ' '/^File System Type:/ {print $2; exit}' > "$work/fstype"
fsstat -o "$off" "${segs[@]}" | awk -F': ' '/^Sector Size:/ {print $2; exit}' > "$work/sector_size"

# Body file with times converted from the workstation's local time to UTC epoch seconds.
fls -o "$off" -r -p -m / -z America/Chicago "${segs[@]}" > "$work/body"

mkdir -p "$work/content"
while IFS='|' read -r _md5 name inode mode _rest; do
    [[ "$mode" == r/r* ]] || continue
    [[ "$name" == *"(Volume Label Entry)"* ]] && continue
    icat -o "$off" -r "${segs[@]}" "$inode" > "$work/content/$inode" || true
    file -b --mime-type "$work/content/$inode" > "$work/content/$inode.mime"
    # First data sector of the entry (relative to the partition) and whether it is allocated now.
    first=$(istat -o "$off" "${segs[@]}" "$inode" | awk '/^Sectors:/ {getline; print $1; exit}')
    if [[ -n "$first" ]]; then
        blkstat -o "$off" "${segs[@]}" "$first" | sed -n 2p > "$work/content/$inode.alloc"
    else
        echo "none" > "$work/content/$inode.alloc"
    fi
done < "$work/body"

python3 "$here/report.py" "$work" "$out"
rm -rf "$work"
