# The DDP training loop's variants, for bench/cuda/ddp.sh and ddp_profile.sh
# (sourced; ROOT set): `ddp_variant <variant> <ranks> <steps>` runs
# test/fixtures/cuda/ddp_train.py under torchrun, plain or under
# `mate guard-run --device cuda` with the guard's counters on
# (MATE_GUARD_CUDA_STATS), stdout and stderr together. STATS=0: as a user
# runs, counters off (they read the clock and add to shared counters on
# every launch, allocation and call site).
#   plain, guard, guard-notrack (--no-track-launches), guard-nostacks
#   (--no-capture-stacks), guard-emptycb (CUPTI subscribed, every callback
#   tracking nothing: MATE_GUARD_CUPTI_EMPTY; with STATS=1 its launchCallMs
#   times the program's launch calls untracked, beside the guard's tracked
#   ones), guard-pending1g (frees wait
#   once 1 GiB of them pend, the bound before it scaled:
#   MATE_GUARD_CUDA_PENDING_MIB), guard-noordering (only the launch calls
#   subscribed: MATE_GUARD_TRACK_SKIP=ordering), guard-emptylaunch (both),
#   guard-norecord, guard-nosite, guard-noargs (MATE_GUARD_TRACK_SKIP: launches
#   seen but not recorded; recorded without their Python call sites; without
#   their guarded arguments), guard-imports (launches seen through the driver
#   functions handed to the program, not CUPTI: MATE_GUARD_TRACK_VIA=imports),
#   guard-alternate (launches recorded in every other ALTERNATE_MS (100) of
#   the clock only, MATE_GUARD_TRACK_ALTERNATE_MS: ddp_train.py prints the
#   median step of each kind of period, tracked against untracked in one
#   process, without the spread between runs), guard-alternate-all (every
#   driver call of the other periods dropped: ALTERNATE_MS,all; what CUPTI
#   costs with nothing tracked stays in both), guard-imports-alternate-all
#   (the same through the import front-end: tracking as good as off in the
#   other periods),
#   guard-nocanary, guard-notrack-nocanary (MATE_GUARD_CUDA_SKIP=canary:
#   canary windows neither filled nor read back), guard-nounmap
#   (MATE_GUARD_CUDA_SKIP=unmap: every size counts as behind, so freed
#   ranges that check clean go back out still mapped whenever their pool
#   has room: what the unmapping quarantine costs),
#   pluggable-null, pluggable-layout (no guard: null_pluggable.py installs
#   the least allocator PyTorch's hook takes, or the guard's layout alone,
#   layout_floor.cc: the floors under the guard, as loop_py.sh's variants;
#   pluggable-layout-<share>, e.g. pluggable-layout-0.97: the layout
#   unmapping that share of the freed ranges, FLOOR_SHARE, 0.57 otherwise),
#   guard-base (the guard of another build: BASE_MATE=<its bin/mate.js>, a
#   copy of packages/core-native with its own build/Release; guard-run picks
#   the library beside the CLI, so MATE_GUARD_CUDA_LIBRARY cannot swap it)
DDP_VARIANTS="plain pluggable-null pluggable-layout pluggable-layout-<share> guard guard-base guard-imports guard-notrack guard-nocanary guard-notrack-nocanary guard-nounmap guard-nostacks guard-emptycb guard-pending1g guard-noordering guard-emptylaunch guard-norecord guard-nosite guard-noargs guard-alternate guard-alternate-all guard-imports-alternate-all"
ddp_variant() {
  local ranks=(python3 -m torch.distributed.run --nproc-per-node "$2")
  local train=("$ROOT/test/fixtures/cuda/ddp_train.py" "$3")
  local torchrun=("${ranks[@]}" "${train[@]}")
  local pluggable=("${ranks[@]}" "$ROOT/bench/cuda/null_pluggable.py")
  local stats=(MATE_GUARD_CUDA_STATS=1)
  [ "${STATS:-1}" = 0 ] && stats=(-u MATE_GUARD_CUDA_STATS)
  local guard=(env "${stats[@]}" node "$ROOT/packages/core-native/bin/mate.js" guard-run --device cuda)
  case $1 in
    plain) "${torchrun[@]}" ;;
    guard) "${guard[@]}" -- "${torchrun[@]}" ;;
    pluggable-null) "${pluggable[@]}" "${train[@]}" ;;
    pluggable-layout) "${pluggable[@]}" --layout "${train[@]}" ;;
    pluggable-layout-[0-9]*) FLOOR_SHARE=${1#pluggable-layout-} "${pluggable[@]}" --layout "${train[@]}" ;;
    guard-base)
      env "${stats[@]}" node "${BASE_MATE:?BASE_MATE=<bin/mate.js of another build> for guard-base}" \
        guard-run --device cuda -- "${torchrun[@]}"
      ;;
    guard-notrack) "${guard[@]}" --no-track-launches -- "${torchrun[@]}" ;;
    guard-nocanary) MATE_GUARD_CUDA_SKIP=canary "${guard[@]}" -- "${torchrun[@]}" ;;
    guard-notrack-nocanary) MATE_GUARD_CUDA_SKIP=canary "${guard[@]}" --no-track-launches -- "${torchrun[@]}" ;;
    guard-nounmap) MATE_GUARD_CUDA_SKIP=unmap "${guard[@]}" -- "${torchrun[@]}" ;;
    guard-nostacks) "${guard[@]}" --no-capture-stacks -- "${torchrun[@]}" ;;
    guard-emptycb) MATE_GUARD_CUPTI_EMPTY=1 "${guard[@]}" -- "${torchrun[@]}" ;;
    guard-norecord | guard-nosite | guard-noargs)
      MATE_GUARD_TRACK_SKIP=${1#guard-no} "${guard[@]}" -- "${torchrun[@]}"
      ;;
    guard-imports) MATE_GUARD_TRACK_VIA=imports "${guard[@]}" -- "${torchrun[@]}" ;;
    guard-noordering) MATE_GUARD_TRACK_SKIP=ordering "${guard[@]}" -- "${torchrun[@]}" ;;
    guard-emptylaunch)
      MATE_GUARD_CUPTI_EMPTY=1 MATE_GUARD_TRACK_SKIP=ordering "${guard[@]}" -- "${torchrun[@]}"
      ;;
    guard-pending1g) MATE_GUARD_CUDA_PENDING_MIB=1024 "${guard[@]}" -- "${torchrun[@]}" ;;
    guard-alternate) MATE_GUARD_TRACK_ALTERNATE_MS=${ALTERNATE_MS:-100} "${guard[@]}" -- "${torchrun[@]}" ;;
    guard-alternate-all)
      MATE_GUARD_TRACK_ALTERNATE_MS=${ALTERNATE_MS:-100},all "${guard[@]}" -- "${torchrun[@]}"
      ;;
    guard-imports-alternate-all)
      MATE_GUARD_TRACK_VIA=imports MATE_GUARD_TRACK_ALTERNATE_MS=${ALTERNATE_MS:-100},all "${guard[@]}" -- "${torchrun[@]}"
      ;;
    *) echo "unknown variant $1 (one of: $DDP_VARIANTS)"; return 2 ;;
  esac 2>&1
}
