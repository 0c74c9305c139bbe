#!/bin/bash
# One H200: ILS frames per second on AdK in its whole OPLS-AA water box (36,597 atoms with periodic
# images, the protein's map) beside the 15 A water shell in vacuum used before (23,439 atoms), and the
# CPU engine on both. Carried: $DEV (xz'd stripped orbitfield).
set -uo pipefail
cd "$(dirname "$0")/../.."
R=$PWD
DEV=${DEV:-.dev-a}
(cd $DEV && for f in *.xz; do [ -e "$f" ] && xz -d "$f"; done; chmod +x * 2>/dev/null)
nvidia-smi -L; nvidia-smi --query-gpu=driver_version,clocks.sm,clocks.max.sm --format=csv,noheader; nproc; date -u
L=$OUT/logs; mkdir -p $L
G=tests/data/md/adk_oplsaa.gro; X=tests/data/md/adk_oplsaa.xtc; XS="$X $X $X $X $X $X $X $X $X $X"
ils() { local tag=$1 sel=$2 lim=$3; shift 3; local s=$(date +%s.%N)
  ORBITFIELD_LOG=orbitfield::timing=debug timeout $lim $DEV/orbitfield grid ils $G $XS --probe o2 --sel "$sel" --around protein --lj-elements "$@" -o $L/ils_$tag.dx > $L/ils_$tag.log 2>&1
  local rc=$? e=$(date +%s.%N); echo "== ils $tag rc $rc wall $(awk -v a=$s -v b=$e 'BEGIN{printf "%.2f", b-a}') s"
  grep "ILS frame" $L/ils_$tag.log | sed -n '3p' | sed 's/.*ILS frame/ILS frame/' | cut -c1-400
  grep "ILS frame" $L/ils_$tag.log | awk '{for(i=1;i<=NF;i++) if($i=="total"){v=$(i+1)+0; if(NR>1){s+=v; n++; if(min==""||v<min)min=v; if(v>max)max=v}}} END{if(n) printf "   GPU frames 2..: mean %.2f ms (min %.2f, max %.2f) over %d\n", s/n, min, max, n}'
  tail -2 $L/ils_$tag.log | cut -c1-420; }
SHELL_SEL="(protein or within 15 of protein) and not name MW"
BOX_SEL="not name MW"
for i in ${RUNS:-1 2}; do
  ils box$i "$BOX_SEL" 150 --device gpu --frames ${FRAMES:-1:100}
  ils shell$i "$SHELL_SEL" 150 --device gpu --frames ${FRAMES:-1:100}
done
case " ${ONLY:-cpu} " in *" cpu "*)
  ils cpu_box "$BOX_SEL" 200 --device cpu --frames 1:2
;; esac
grep -h "ILS frame" $L/ils_box1.log | head -1 | cut -c1-300
date -u
