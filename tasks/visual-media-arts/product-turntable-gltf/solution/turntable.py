"""Blender 3.4 headless: fix the CAD OBJ, apply the colour spec, key the turntable, export glTF.

blender -b --factory-startup --python turntable.py -- OBJ MATERIALS_CSV OUT_GLB
"""
import csv
import math
import sys

import bmesh
import bpy
from mathutils import Matrix, Vector

obj_path, csv_path, glb_path = sys.argv[sys.argv.index("--") + 1:]
FPS, FRAMES = 30, 120

bpy.ops.wm.read_factory_settings(use_empty=True)
# The header says centimetres, +Z up, -Y front: Blender's own axes, so no axis conversion.
bpy.ops.wm.obj_import(filepath=obj_path, forward_axis="NEGATIVE_Y", up_axis="Z", global_scale=0.01)
parts = [o for o in bpy.context.scene.objects if o.type == "MESH"]


def fingerprint(ob):
    return tuple(sorted(tuple(round(c, 6) for c in (ob.matrix_world @ v.co)) for v in ob.data.vertices))


# CAD exports can repeat a body: drop shells whose vertices coincide with an earlier one.
seen, keep = {}, []
for ob in sorted(parts, key=lambda o: o.name):
    key = fingerprint(ob)
    if key in seen:
        bpy.data.objects.remove(ob, do_unlink=True)
    else:
        seen[key] = ob
        keep.append(ob)
parts = keep

for ob in parts:
    ob.data.transform(ob.matrix_world)  # bake the import scale into the mesh
    ob.matrix_world.identity()
    bm = bmesh.new()
    bm.from_mesh(ob.data)
    bmesh.ops.recalc_face_normals(bm, faces=bm.faces)  # outward winding on every closed shell
    bm.to_mesh(ob.data)
    bm.free()

pts = [ob.matrix_world @ v.co for ob in parts for v in ob.data.vertices]
lo = Vector([min(p[i] for p in pts) for i in range(3)])
hi = Vector([max(p[i] for p in pts) for i in range(3)])
pivot = Vector(((lo.x + hi.x) / 2, (lo.y + hi.y) / 2, lo.z))
for ob in parts:
    ob.data.transform(Matrix.Translation(-pivot))
    ob.data.update()

spec = {row["part_number"]: row for row in csv.DictReader(open(csv_path, newline=""))}


def to_linear(c):
    return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4


for ob in parts:
    row = spec[ob.name.split(".")[0]]
    mat = bpy.data.materials.new(row["material_name"])
    mat.use_nodes = True
    bsdf = mat.node_tree.nodes["Principled BSDF"]
    hexa = row["base_color_srgb"].lstrip("#")
    rgb = [to_linear(int(hexa[i:i + 2], 16) / 255) for i in (0, 2, 4)]
    bsdf.inputs["Base Color"].default_value = (*rgb, 1.0)
    bsdf.inputs["Metallic"].default_value = float(row["metallic"])
    bsdf.inputs["Roughness"].default_value = float(row["roughness"])
    bsdf.inputs["Transmission"].default_value = float(row["transmission"])
    mat.use_backface_culling = True  # closed shells: single-sided in glTF
    ob.data.materials.clear()
    ob.data.materials.append(mat)
    ob.name = row["part_number"]

rig = bpy.data.objects.new("Turntable", None)
bpy.context.scene.collection.objects.link(rig)
for ob in parts:
    ob.parent = rig

scene = bpy.context.scene
scene.render.fps = FPS
scene.frame_start, scene.frame_end = 1, FRAMES
# Frame 121 would repeat frame 1, so the last key is one step short of a full turn; the
# exporter samples the action's own key range, whatever the scene range says.
for frame, angle in ((1, 0.0), (FRAMES, 2 * math.pi * (FRAMES - 1) / FRAMES)):
    rig.rotation_euler = (0.0, 0.0, angle)
    rig.keyframe_insert("rotation_euler", index=2, frame=frame)
for fc in rig.animation_data.action.fcurves:
    for k in fc.keyframe_points:
        k.interpolation = "LINEAR"
scene.frame_set(1)

bpy.ops.export_scene.gltf(filepath=glb_path, export_format="GLB", export_frame_range=True,
                          export_force_sampling=True, export_yup=True, export_apply=False)
