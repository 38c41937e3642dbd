#!/bin/bash
# Oracle for product-turntable-gltf: Blender fixes the CAD OBJ and exports the turntable glTF.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p /task/output
blender -b --factory-startup --python-exit-code 1 --python "$here/turntable.py" -- \
    /task/inputs/PRT-2043_assembly.obj /task/inputs/materials.csv /task/output/product.glb
test -s /task/output/product.glb
