# The reference loop's variants under the Python package, for
# bench/cuda/loop_py.sh and loop_profile.sh (sourced): `loop_variant
# <variant>` sets LOOP_ARGS (python's arguments before the script: none for
# caching, `-m mate_guard` and its flags else) and LOOP_ENV (VAR=value
# words for env). Returns 2 for an unknown variant.
#   caching (PyTorch's own allocator), guard (defaults), guard-notrack
#   (--no-track-launches), guard-emptycb (CUPTI subscribed, every callback
#   tracking nothing: MATE_GUARD_CUPTI_EMPTY), guard-norecord, guard-nosite,
#   guard-noargs (MATE_GUARD_TRACK_SKIP: launches seen but not recorded;
#   recorded without their Python call sites; without their guarded
#   arguments), guard-noordering (MATE_GUARD_TRACK_SKIP=ordering: only the
#   launch calls subscribed, event records, waits, queries and synchronizes
#   not), guard-emptylaunch (both: CUPTI subscribed to the launch calls only,
#   callbacks returning at once), guard-nostacks
#   (--no-capture-stacks), guard-exact (--device-exact-placement),
#   guard-strict (--cuda-quarantine strict: every freed range unmapped),
#   guard-imports (launches seen through the driver functions handed to the
#   program, not CUPTI: MATE_GUARD_TRACK_VIA=imports),
#   guard-nocanary, guard-notrack-nocanary (MATE_GUARD_CUDA_SKIP=canary:
#   canary windows neither filled nor read back, with and without tracking),
#   guard-notrack-nostacks (neither tracking nor Python call sites),
#   guard-base (the guard from another library, BASE_LIB=<libmate_guard_cuda.so>),
#   pluggable-null (no guard: the least allocator PyTorch's pluggable hook can
#   take, null_pluggable.py: that hook's own cost), pluggable-floor (the same
#   plus quarantine_floor.cc's unmap, map and open of a chunk on a background
#   thread for the share of frees the guard unmaps, FLOOR_SHARE: the least
#   driver work a quarantine that makes stale pointers fault adds),
#   pluggable-floor-fences (the same, each batch of cycles after an event on
#   the freeing streams, as the guard's fences: FLOOR_FENCES=1),
#   pluggable-layout (layout_floor.cc: the guard's layout, fences, unmapping
#   and mapping ahead, and nothing else: the floor under its allocator),
#   pluggable-layout-512 and guard-notrack-align512 (the same and the guard
#   without tracking with pointers 512-byte aligned, as PyTorch's caching
#   allocator gives them: does the 16-byte default cost the GPU's kernels?)
loop_variant() {
  LOOP_ARGS=(-m mate_guard)
  LOOP_ENV=()
  case $1 in
    caching) LOOP_ARGS=() ;;
    pluggable-null) LOOP_ARGS=("$(dirname "${BASH_SOURCE[0]}")/null_pluggable.py") ;;
    pluggable-floor) LOOP_ARGS=("$(dirname "${BASH_SOURCE[0]}")/null_pluggable.py" --floor) ;;
    pluggable-floor-fences)
      LOOP_ARGS=("$(dirname "${BASH_SOURCE[0]}")/null_pluggable.py" --floor)
      LOOP_ENV=(FLOOR_FENCES=1)
      ;;
    pluggable-layout) LOOP_ARGS=("$(dirname "${BASH_SOURCE[0]}")/null_pluggable.py" --layout) ;;
    pluggable-layout-512)
      LOOP_ARGS=("$(dirname "${BASH_SOURCE[0]}")/null_pluggable.py" --layout)
      LOOP_ENV=(LAYOUT_ALIGN=512)
      ;;
    guard-notrack-align512) LOOP_ARGS+=(--no-track-launches --alignment 512) ;;
    guard) ;;
    guard-notrack) LOOP_ARGS+=(--no-track-launches) ;;
    guard-emptycb) LOOP_ENV=(MATE_GUARD_CUPTI_EMPTY=1) ;;
    guard-norecord) LOOP_ENV=(MATE_GUARD_TRACK_SKIP=record) ;;
    guard-nosite) LOOP_ENV=(MATE_GUARD_TRACK_SKIP=site) ;;
    guard-noargs) LOOP_ENV=(MATE_GUARD_TRACK_SKIP=args) ;;
    guard-noordering) LOOP_ENV=(MATE_GUARD_TRACK_SKIP=ordering) ;;
    guard-emptylaunch) LOOP_ENV=(MATE_GUARD_CUPTI_EMPTY=1 MATE_GUARD_TRACK_SKIP=ordering) ;;
    guard-imports) LOOP_ENV=(MATE_GUARD_TRACK_VIA=imports) ;;
    guard-nostacks) LOOP_ARGS+=(--no-capture-stacks) ;;
    guard-notrack-nostacks) LOOP_ARGS+=(--no-track-launches --no-capture-stacks) ;;
    guard-nocanary) LOOP_ENV=(MATE_GUARD_CUDA_SKIP=canary) ;;
    guard-notrack-nocanary)
      LOOP_ARGS+=(--no-track-launches)
      LOOP_ENV=(MATE_GUARD_CUDA_SKIP=canary)
      ;;
    guard-exact) LOOP_ARGS+=(--device-exact-placement) ;;
    guard-strict) LOOP_ARGS+=(--cuda-quarantine strict) ;;
    guard-base) LOOP_ENV=(MATE_GUARD_CUDA_LIBRARY="${BASE_LIB:?BASE_LIB=<libmate_guard_cuda.so> for guard-base}") ;;
    *)
      echo "unknown variant $1" >&2
      return 2
      ;;
  esac
}
