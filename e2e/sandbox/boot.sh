#!/bin/bash
# Boot script for the systemd sandbox (see README.md and ../../../shared/notes/systemd-sandbox.md).
#
#   boot.sh stage1 <cgroup-dir> <name>   host side: join the dedicated cgroup, then unshare
#   boot.sh stage2 <name>                PID 1 of the new namespaces: build the root, exec systemd
#
# Every argument is checked against a strict pattern and only ever used as a quoted word;
# nothing here evaluates text it was given.
set -euo pipefail
shopt -s nullglob

readonly SCRIPT="$(readlink -f -- "${BASH_SOURCE[0]}")"
readonly NAME_RE='^[a-z0-9][a-z0-9-]{0,40}$'
# The dedicated parent cgroup: under the cgroup2 mount of a hybrid host, or of a pure v2 host.
readonly CGROUP_PARENTS=('/sys/fs/cgroup/unified/gpudeck-sandbox' '/sys/fs/cgroup/gpudeck-sandbox')
readonly TARGET='gpudeck-sandbox.target'

die() { echo "sandbox boot: $*" >&2; exit 1; }

stage1() {
  local cgdir="$1" name="$2"
  [[ "$name" =~ $NAME_RE ]] || die "bad name"
  [[ "$cgdir" == "${CGROUP_PARENTS[0]}/$name" || "$cgdir" == "${CGROUP_PARENTS[1]}/$name" ]] \
    || die "cgroup dir must be one of ${CGROUP_PARENTS[*]} followed by /<name>"
  [[ -d "$cgdir" ]] || die "cgroup dir $cgdir missing"
  # The cgroup namespace made by unshare is rooted at the cgroup we are in at that moment.
  echo "$$" > "$cgdir/cgroup.procs"
  exec unshare --pid --fork --kill-child=SIGKILL --mount --uts --ipc --cgroup --propagation=private \
    -- /bin/bash "$SCRIPT" stage2 "$name"
}

# Units the minimal target may pull in. Everything else reachable from the standard targets
# is masked: it would touch machine-wide state (udev, sysctl, binfmt, modules, clock, ...).
readonly KEEP_UNITS=(
  systemd-journald.service systemd-journald.socket systemd-journald-dev-log.socket
  dbus.service dbus.socket
  systemd-tmpfiles-setup.service
)
readonly EXTRA_MASKS=(
  systemd-udevd.service systemd-udevd-control.socket systemd-udevd-kernel.socket systemd-udev-trigger.service
  systemd-udev-settle.service systemd-networkd.service systemd-networkd.socket systemd-networkd-wait-online.service
  systemd-resolved.service systemd-timesyncd.service systemd-logind.service getty@.service serial-getty@.service
  console-getty.service container-getty@.service getty-static.service systemd-binfmt.service systemd-sysctl.service
  systemd-modules-load.service kmod-static-nodes.service systemd-fsck-root.service systemd-fsck@.service
  systemd-remount-fs.service systemd-journal-flush.service systemd-journald-audit.socket
  systemd-journald-varlink@.socket systemd-journald@.service systemd-journald@.socket
  systemd-tmpfiles-setup-dev.service systemd-tmpfiles-clean.service systemd-tmpfiles-clean.timer
  systemd-hostnamed.service systemd-localed.service systemd-timedated.service systemd-hwdb-update.service
  systemd-random-seed.service systemd-update-utmp.service systemd-update-utmp-runlevel.service
  systemd-machine-id-commit.service systemd-firstboot.service systemd-sysusers.service systemd-pstore.service
  systemd-repart.service systemd-pcrphase.service systemd-pcrphase-sysinit.service systemd-boot-update.service
  systemd-ask-password-console.path systemd-ask-password-wall.path systemd-initctl.socket
  systemd-journal-catalog-update.service systemd-update-done.service ldconfig.service
  proc-sys-fs-binfmt_misc.automount proc-sys-fs-binfmt_misc.mount dev-hugepages.mount dev-mqueue.mount
  sys-fs-fuse-connections.mount sys-kernel-config.mount sys-kernel-debug.mount sys-kernel-tracing.mount
  swap.target cryptsetup.target integritysetup.target veritysetup.target remote-fs.target
  avahi-daemon.service avahi-daemon.socket polkit.service systemd-user-sessions.service
  e2scrub_reap.service postgresql.service cron.service ssh.service rsyslog.service
)
readonly WANTS_OF=(sysinit basic sockets timers paths slices local-fs local-fs-pre multi-user getty graphical default)

make_dev() {
  local dev="$1"
  mount -t tmpfs -o mode=755,nosuid,noexec,size=1m gpudeck-sandbox-dev "$dev"
  mknod -m 666 "$dev/null" c 1 3
  mknod -m 666 "$dev/zero" c 1 5
  mknod -m 666 "$dev/full" c 1 7
  mknod -m 666 "$dev/random" c 1 8
  mknod -m 666 "$dev/urandom" c 1 9
  mknod -m 666 "$dev/tty" c 5 0
  mkdir -m 755 "$dev/pts" "$dev/shm"
  chmod 1777 "$dev/shm"
  mount -t devpts -o newinstance,ptmxmode=0666,mode=620,nosuid,noexec devpts "$dev/pts"
  ln -s pts/ptmx "$dev/ptmx"
  mount -t tmpfs -o mode=1777,nosuid,nodev,size=64m shm "$dev/shm"
  ln -s /proc/self/fd "$dev/fd"
  ln -s /proc/self/fd/0 "$dev/stdin"
  ln -s /proc/self/fd/1 "$dev/stdout"
  ln -s /proc/self/fd/2 "$dev/stderr"
}

configure_systemd() {
  local root="$1" name="$2"
  local etc="$root/etc/systemd/system"
  mkdir -p "$etc" "$root/etc/systemd/system-generators" "$root/etc/systemd/journald.conf.d"

  # No generators: fstab/getty/sysv/... would turn host configuration into units.
  local gen
  for gen in "$root"/usr/lib/systemd/system-generators/* "$root"/lib/systemd/system-generators/*; do
    ln -sfn /dev/null "$root/etc/systemd/system-generators/$(basename -- "$gen")"
  done

  local -A keep=() masks=()
  local u
  for u in "${KEEP_UNITS[@]}"; do keep[$u]=1; done
  for u in "${EXTRA_MASKS[@]}"; do masks[$u]=1; done
  local t dir
  for t in "${WANTS_OF[@]}"; do
    for dir in "$root/usr/lib/systemd/system/$t.target.wants" "$root/lib/systemd/system/$t.target.wants" \
               "$root/etc/systemd/system/$t.target.wants"; do
      for u in "$dir"/*; do masks[$(basename -- "$u")]=1; done
    done
  done
  # Drop the host's enablement symlinks (they live in the overlay's upper layer once removed).
  for dir in "$etc"/*.wants "$etc"/*.requires; do rm -rf -- "$dir"; done
  for u in "${!masks[@]}"; do
    [[ -n "${keep[$u]:-}" ]] && continue
    ln -sfn /dev/null "$etc/$u"
  done

  cat > "$etc/$TARGET" <<UNIT
[Unit]
Description=gpudeck test sandbox
Requires=basic.target
Wants=dbus.socket dbus.service systemd-journald.service
After=basic.target dbus.service
AllowIsolate=yes
UNIT
  cat > "$root/etc/systemd/journald.conf.d/gpudeck-sandbox.conf" <<'CONF'
[Journal]
Storage=volatile
ReadKMsg=no
ForwardToSyslog=no
ForwardToKMsg=no
ForwardToConsole=no
ForwardToWall=no
Audit=no
RuntimeMaxUse=32M
CONF
  echo "$name" > "$root/etc/hostname"
}

stage2() {
  local name="$1"
  [[ "$name" =~ $NAME_RE ]] || die "bad name"
  [[ $$ -eq 1 ]] || die "stage2 must run as PID 1 of a new PID namespace"
  # Paranoia: never continue on a shared mount tree (everything below would reach the host).
  mount --make-rprivate /

  hostname "$name"
  # Staging tmpfs over /mnt (this mount namespace only): overlay upper/work dirs and the new root.
  local stage=/mnt
  mount -t tmpfs -o mode=700,size=1g gpudeck-sandbox-stage "$stage"
  mkdir -p "$stage/upper" "$stage/work" "$stage/root"
  mount -t overlay -o "lowerdir=/,upperdir=$stage/upper,workdir=$stage/work" gpudeck-sandbox-root "$stage/root"
  local root="$stage/root"

  mount -t proc -o nosuid,nodev,noexec proc "$root/proc"
  mount --bind "$root/proc/sys" "$root/proc/sys"
  mount -o remount,bind,ro "$root/proc/sys"
  if [[ -e "$root/proc/sysrq-trigger" ]]; then  # absent when the kernel has no magic SysRq
    mount --bind "$root/proc/sysrq-trigger" "$root/proc/sysrq-trigger"
    mount -o remount,bind,ro "$root/proc/sysrq-trigger"
  fi

  mount -t sysfs -o ro,nosuid,nodev,noexec sysfs "$root/sys"
  # cgroup2 only, rooted at our namespace's root (the dedicated sub-cgroup).
  mount -t cgroup2 -o nosuid,nodev,noexec cgroup2 "$root/sys/fs/cgroup"

  make_dev "$root/dev"
  mount -t tmpfs -o mode=755,nosuid,nodev,size=256m gpudeck-sandbox-run "$root/run"
  mount -t tmpfs -o mode=1777,nosuid,nodev,size=512m gpudeck-sandbox-tmp "$root/tmp"

  # The project may live under /tmp or /run (a CI clone can be anywhere), which the fresh tmpfs
  # mounts above hide: show it inside again, read-only, so the agent runs from the same path.
  local share="${GPUDECK_SANDBOX_SHARE:-}"
  if [[ -n "$share" && "$share" == /* && "$share" != *..* && -d "$share" ]]; then
    case "$share" in
      /tmp/*|/run/*)
        mkdir -p "$root$share"
        mount --bind "$share" "$root$share"
        mount -o remount,bind,ro "$root$share"
        ;;
    esac
  fi

  configure_systemd "$root" "$name"

  mkdir -p "$root/.gpudeck-oldroot"
  cd "$root"
  pivot_root . .gpudeck-oldroot
  cd /
  umount -l /.gpudeck-oldroot
  rmdir /.gpudeck-oldroot

  exec setpriv \
    --bounding-set=-sys_module,-sys_time,-sys_rawio,-syslog,-audit_control,-audit_read,-audit_write,-mac_admin,-mac_override,-wake_alarm,-net_admin,-block_suspend \
    -- /usr/bin/env -i container=other PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 \
    /lib/systemd/systemd --system "--unit=$TARGET" --show-status=false
}

case "${1:-}" in
  stage1) [[ $# -eq 3 ]] || die "usage: boot.sh stage1 <cgroup-dir> <name>"; stage1 "$2" "$3" ;;
  stage2) [[ $# -eq 2 ]] || die "usage: boot.sh stage2 <name>"; stage2 "$2" ;;
  *) die "usage: boot.sh stage1|stage2 ..." ;;
esac
