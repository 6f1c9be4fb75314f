#!/usr/bin/env bash
# Makes docs/images/gtkwave-plant.png, the README's picture of an exported trace in GTKWave:
# examples/plant recorded for 700 cycles, ten of its signals exported as a VCD, opened in GTKWave
# under Xvfb and the screen captured. Needs (Debian) gtkwave, xvfb, xauth, x11-apps (xwd) and
# imagemagick; and a built scanback (default build/scanback).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
scanback="${SCANBACK_BINARY:-$root/build/scanback}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$scanback" run "$root"/examples/plant/*.st --inputs "$root/examples/plant/stimulus.csv" --cycles 700 \
  --record "$work/plant.trace" --quiet
"$scanback" trace export "$work/plant.trace" --vcd "$work/plant.vcd" \
  --vars 'Line.state,Line.motorCmd,Line.conveyorOut,Line.fillValve,Line.fillerSensor,Line.batches,Line.anyAlarm,gHorn,Tank.level,Tank.inletCmd'
# The signals and how GTKWave draws them: BOOL as wires, the state as text, the levels as analog.
cat > "$work/plant.gtkw" <<GTKW
[dumpfile] "plant.vcd"
[size] 1280 640
[pos] 0 0
[sst_width] 1
[signals_width] 220
[sst_expanded] 0
[sst_vpaned_height] 0
@28
Line.state
Line.motorCmd
Line.conveyorOut
Line.fillerSensor
Line.fillValve
@24
Line.batches
@28
Line.anyAlarm
GLOBALS.gHorn
@8420
Tank.level
@20000
-
-
@8420
Tank.inletCmd
@20000
-
-
GTKW
cat > "$work/gtkwaverc" <<'RC'
do_initial_zoom_fit yes
hide_sst yes
RC
xvfb-run -a -s "-screen 0 1280x640x24" bash -c "
  cd '$work'
  gtkwave --rcfile '$work/gtkwaverc' plant.gtkw >/dev/null 2>&1 &
  pid=\$!
  sleep 8  # GTKWave loads and draws (a picture for the README, not a test)
  xwd -root -silent > '$work/shot.xwd'
  kill \$pid
"
/usr/bin/convert "$work/shot.xwd" "$here/gtkwave-plant.png"
echo "wrote $here/gtkwave-plant.png"
