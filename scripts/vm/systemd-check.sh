#!/bin/sh
# Inside the systemd VM of scripts/systemd-vm-test, as the oneshot unit rtsoak-vm-check.service
# with systemd as PID 1: install the package with apt as an administrator would, run the
# packaged units through systemctl, and leave what they did in /mnt/out (the host's 9p share)
# for scripts/check_systemd_vm.py to judge (with RTSOAK_VM_INSTALL_ONLY set, in a chroot: the
# install, and what the units leave made by hand). Both end with `apt-get purge`, listing /etc,
# /usr and /var before the install and after the purge. Nothing is judged here; every step runs
# whatever the one before did, and the machine powers off at the end.
out=/mnt/out
exec >"$out/check.log" 2>&1
set -x

# show UNIT NAME: the unit's state after a step, for the host.
show() {
    systemctl show -p ActiveState,SubState,Result,ExecMainStatus,NRestarts "$1" >"$out/$2.show"
    journalctl -u "$1" -o cat --no-pager >"$out/$2.journal"
}
# result_of INSTANCE NAME: the newest result.json the instance saved.
result_of() {
    newest=$(ls -1d /var/lib/rtsoak/"$1"/2* 2>/dev/null | tail -n 1)
    [ -n "$newest" ] && cp "$newest/result.json" "$out/$2.result.json"
    ls -la /var/lib/rtsoak/"$1" >"$out/$2.dir" 2>&1
}

# files: every path under /etc, /usr and /var, for the before-and-after of a purge.
files() {
    find /etc /usr /var -xdev 2>/dev/null | sort
}
# purge: the administrator's own files go first (here: the test's), then `apt-get purge`; what
# is left is listed for the host to set against what was there before the package.
purge() {
    rm -rf /etc/systemd/system/rtsoak@.service.d /etc/systemd/system/vm-alert@.service \
        /etc/rtsoak/profiles/vm*.toml
    files >"$out/before-purge.txt"
    apt-get purge -y rtsoak >"$out/purge.log" 2>&1
    echo $? >"$out/purge.exit"
    files >"$out/after-purge.txt"
}

uname -a >"$out/uname.txt"
files >"$out/before-install.txt"
systemctl --version | head -n 1 >"$out/systemd-version.txt"
. /etc/os-release && echo "$PRETTY_NAME" >"$out/os-release.txt"

# 1. The package, as a user installs it.
apt-get install -y /root/rtsoak_*.deb >"$out/install.log" 2>&1
echo $? >"$out/install.exit"
dpkg-query -W -f='${Status} ${Version} ${Architecture}\n' rtsoak >"$out/dpkg-status.txt"
dpkg-query -W -f='${Conffiles}\n' rtsoak >"$out/conffiles.txt"
command -v rtsoak >"$out/which.txt"
# The worker program is rtsoak's, not a command: in /usr/libexec, not on PATH.
command -v rtsoak-worker >"$out/worker-on-path.txt"
ls -l /usr/libexec/rtsoak/rtsoak-worker >"$out/worker.txt" 2>&1
rtsoak --version >"$out/version.txt" 2>&1
systemd-analyze verify rtsoak@vmpass.service rtsoak@vmpass.timer rtsoak-nightly.service \
    rtsoak-nightly.timer >"$out/verify.txt" 2>&1
echo $? >"$out/verify.exit"
# --install-only (scripts/systemd-vm-test runs this in a chroot of the root, with no systemd to
# drive): the package alone.
if [ -n "${RTSOAK_VM_INSTALL_ONLY:-}" ]; then
    # What the units would leave, where they leave it, made here without a systemd to run
    # them: the timers enabled (systemctl enable works on the files alone), a timer's last-run
    # stamp (systemd's, for Persistent=true), a result in the nightly's results directory (a
    # saved real one) and the node_exporter textfile (written by rtsoak from it).
    systemctl enable rtsoak-nightly.timer rtsoak@nightly.timer >"$out/enable.log" 2>&1
    ls -l /etc/systemd/system/timers.target.wants >>"$out/enable.log" 2>&1
    mkdir -p /var/lib/systemd/timers /var/lib/rtsoak/nightly/20261205T023000Z-compare \
        /var/lib/prometheus/node-exporter
    : >/var/lib/systemd/timers/stamp-rtsoak-nightly.timer
    cp /root/saved-result.json /var/lib/rtsoak/nightly/20261205T023000Z-compare/result.json
    rtsoak report --format prometheus -o /var/lib/prometheus/node-exporter/rtsoak-nightly.prom \
        /var/lib/rtsoak/nightly/20261205T023000Z-compare >>"$out/enable.log" 2>&1
    purge
    echo done >"$out/check.done"
    exit 0
fi

# 2. The administrator's side: profiles for this VM in /etc/rtsoak/profiles (found by name),
# node_exporter's textfile directory, and a drop-in that skips the 10-minute wait after boot
# and names an OnFailure= unit, as docs/package.md shows.
common='[run]
transports = ["eventfd"]
warmup_ms = 200
period_us = 1000
interval_s = 1
explain = "off"

[cpus]
publisher = 4
subscriber = 5
noise = "0-1"

[noise]
enabled = false
'
printf 'description = "VM: passes"\n%s\n[verdict]\nrequire_preempt_rt = true\nrequire_rt_priority = true\nrequire_isolated_cpus = true\ninconclusive_missed_percent = 100\n' \
    "$common" | sed 's/^\[run\]$/[run]\nduration_s = 3/' >/etc/rtsoak/profiles/vmpass.toml
printf 'description = "VM: long, to be stopped"\n%s\n[verdict]\ninconclusive_missed_percent = 100\n' \
    "$common" | sed 's/^\[run\]$/[run]\nduration_s = 300/' >/etc/rtsoak/profiles/vmlong.toml
printf 'description = "VM: breaches its limit"\n%s\n[verdict]\nmax_send_call_us = 1\ninconclusive_missed_percent = 100\n' \
    "$common" | sed 's/^\[run\]$/[run]\nduration_s = 3/' >/etc/rtsoak/profiles/vmbreach.toml
rtsoak profiles >"$out/profiles.txt" 2>&1
mkdir -p /var/lib/prometheus/node-exporter /etc/systemd/system/rtsoak@.service.d
cat >/etc/systemd/system/rtsoak@.service.d/vm-test.conf <<'UNIT'
[Unit]
OnFailure=vm-alert@%n.service

[Service]
ExecStartPre=
UNIT
cat >/etc/systemd/system/vm-alert@.service <<'UNIT'
[Unit]
Description=What an alert unit does: note which unit failed

[Service]
Type=oneshot
ExecStart=/bin/sh -c 'echo "%i failed" >/mnt/out/alert.txt'
UNIT
systemctl daemon-reload

# 3. A run that passes: inactive, not failed, a result saved, the summary in the journal.
systemctl start rtsoak@vmpass.service
echo $? >"$out/pass.exit"
show rtsoak@vmpass.service pass
result_of vmpass pass
ls -la /var/lib/prometheus/node-exporter >"$out/textfile.txt"

# 4. systemctl stop in the middle of a run: not failed, the result marked interrupted.
systemctl start --no-block rtsoak@vmlong.service
waited=0
until [ -n "$(ls /var/lib/rtsoak/vmlong 2>/dev/null)" ] || [ $waited -ge 120 ]; do
    sleep 1
    waited=$((waited + 1))
done
sleep 15
systemctl stop rtsoak@vmlong.service
echo $? >"$out/stop.exit"
show rtsoak@vmlong.service stop
result_of vmlong stop

# 5. A breach: the unit fails and its OnFailure= unit runs.
systemctl start rtsoak@vmbreach.service
echo $? >"$out/breach.exit"
waited=0
until [ -e "$out/alert.txt" ] || [ $waited -ge 30 ]; do sleep 1; waited=$((waited + 1)); done
show rtsoak@vmbreach.service breach
result_of vmbreach breach

# 6. The timer: started, it lists its next elapse.
systemctl start rtsoak@vmpass.timer
systemctl list-timers --all --no-pager 'rtsoak@*' >"$out/timer.txt"
systemctl show -p ActiveState,NextElapseUSecRealtime rtsoak@vmpass.timer >"$out/timer.show"

# 7. Purge, after the units ran for real: enabled timers, results, the textfile.
systemctl enable rtsoak@vmpass.timer rtsoak-nightly.timer >"$out/enable.log" 2>&1
systemctl stop rtsoak@vmpass.timer
purge

echo done >"$out/check.done"
sync
systemctl poweroff --no-block
