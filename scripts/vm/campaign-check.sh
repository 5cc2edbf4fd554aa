#!/bin/sh
# Inside the systemd guest of `scripts/campaign-vm-test kexec`, at every boot, as the unit
# rtsoak-vm-campaign.service: note what this boot is, then drive three kexec campaigns one after
# another (the plans in /root/plans), and leave what they did in /mnt/out (the host's 9p share)
# for scripts/check_campaign.py. Nothing is judged here.
#
# The first boot installs the package and starts campaign 1. A boot where a campaign is under
# way does nothing but wait (rtsoak-campaign.service carries it; the kexec stops this unit). A
# boot where the current campaign has finished copies its state directory out, starts the next
# one, or, after the last, powers the machine off.
out=/mnt/out
state=/var/lib/rtsoak/campaign
log="$out/check.log"
exec >>"$log" 2>&1
echo "=== boot $(cat /proc/sys/kernel/random/boot_id) at $(date -u +%FT%TZ)"

# What this boot is, for the host: one line per boot.
{
    printf '%s\t%s\t%s\t' "$(cat /proc/sys/kernel/random/boot_id)" "$(uname -r)" "$(cat /proc/cmdline)"
    printf 'stage=%s\tunit=%s\n' "$(cat "$out/stage" 2>/dev/null || echo 0)" \
        "$(systemctl is-enabled rtsoak-campaign.service 2>&1)"
} >>"$out/boots.tsv"

finished() {
    grep -q '"phase": "finished"' "$state/campaign.json" 2>/dev/null
}

start_stage() {
    stage=$1
    echo "$stage" >"$out/stage"
    sync
    echo "starting campaign $stage"
    rtsoak campaign check "$(ls /root/plans/"$stage"-*.toml)" >"$out/check-$stage.txt" 2>&1
    echo $? >"$out/check-$stage.exit"
    rtsoak campaign start "$(ls /root/plans/"$stage"-*.toml)" >"$out/start-$stage.txt" 2>&1
    # Only reached when the start failed (a started campaign kexecs and this unit is stopped).
    echo $? >"$out/start-$stage.exit"
    sync
}

stage=$(cat "$out/stage" 2>/dev/null || echo 0)
if [ "$stage" = 0 ]; then
    apt-get install -y /root/rtsoak_*.deb >"$out/install.log" 2>&1
    echo $? >"$out/install.exit"
    systemd-analyze verify rtsoak-campaign.service >"$out/verify.txt" 2>&1
    echo $? >"$out/verify.exit"
    start_stage 1
    exit 0
fi
# No state: the campaign's start never got as far as saving it (the guest went down first, as
# an emulation failure can take it down). Start it again, once.
if [ ! -e "$state/state.json" ]; then
    restarts=$(cat "$out/restarts-$stage" 2>/dev/null || echo 0)
    if [ "$restarts" -lt 1 ]; then
        echo $((restarts + 1)) >"$out/restarts-$stage"
        echo "campaign $stage has no state: starting it again"
        start_stage "$stage"
        exit 0
    fi
    echo "campaign $stage never started"
    systemctl poweroff
    exit 1
fi
# A campaign under way: rtsoak-campaign.service resumes it in this boot; wait until it ends or
# the machine goes down.
waited=0
while ! finished && [ $waited -lt 7200 ]; do
    sleep 5
    waited=$((waited + 5))
done
finished || { echo "campaign $stage never finished"; systemctl poweroff; exit 1; }
# Give the unit a moment to disable itself after its last save.
for _ in 1 2 3 4 5 6; do
    [ "$(systemctl is-enabled rtsoak-campaign.service 2>&1)" = disabled ] && break
    sleep 5
done
echo "campaign $stage finished"
{
    echo "boot_id=$(cat /proc/sys/kernel/random/boot_id)"
    echo "release=$(uname -r)"
    echo "cmdline=$(cat /proc/cmdline)"
    echo "unit=$(systemctl is-enabled rtsoak-campaign.service 2>&1)"
    echo "kexec_loaded=$(cat /sys/kernel/kexec_loaded)"
} >"$out/end-$stage.txt"
rtsoak campaign status >"$out/status-$stage.txt" 2>&1
rtsoak campaign report "$state" --bisect >/dev/null 2>&1
echo $? >"$out/bisect-$stage.exit"
rtsoak campaign report "$state" --format junit --output "$out/junit-$stage.xml" >/dev/null 2>&1
journalctl -u rtsoak-campaign.service --no-pager -o short-precise >"$out/journal-$stage.txt" 2>&1
rm -rf "$out/campaign-$stage"
cp -a "$state" "$out/campaign-$stage"
mv "$state" "/var/lib/rtsoak/campaign-$stage"
sync
if [ "$stage" -lt 3 ]; then
    start_stage $((stage + 1))
else
    echo done >"$out/check.done"
    sync
    systemctl poweroff
fi
