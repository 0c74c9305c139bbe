set -uo pipefail
# Calls 3, 4, 7 and 8 of 2026-11-29 (RESULTS.md, "Implicit ligand sampling", "A solvated protein"): a build that read the
# kernel source from ORBITFIELD_ILS_CU (the committed code has no such variable) ran each variant of kernels/ils.cu
# carried in $DEV/<name>.cu on the whole AdK box; the maps are compared below 10 kT.
DEV=.dev-a; (cd $DEV && for f in *.xz; do [ -e "$f" ] && xz -d "$f"; done; chmod +x * 2>/dev/null)
G=tests/data/md/adk_oplsaa.gro; X=tests/data/md/adk_oplsaa.xtc; XS="$X $X $X $X $X $X $X $X $X $X"
L=$OUT/logs; mkdir -p $L
SEL=${SEL:-not name MW}
for v in ${VS:-v0 v1}; do
  s=$(date +%s.%N)
  ORBITFIELD_ILS_CU=$DEV/$v.cu ORBITFIELD_LOG=orbitfield::timing=debug timeout 120 $DEV/orbitfield grid ils $G $XS --probe o2 --sel "$SEL" --around protein --lj-elements --device gpu --frames ${FRAMES:-1:100} -o $L/$v.dx > $L/$v.log 2>&1
  echo "== $v rc $? $(tail -1 $L/$v.log | grep -o '([0-9.]* (after the first: [0-9.]*) frames/s')"
  grep "ILS frame" $L/$v.log | sed -n '2p' | grep -o "device ms.*"
done
set -- ${VS:-v0 v1}; first=$1; shift
for c in "$@"; do
awk 'FNR==1{f++} /^[-0-9. eE+]+$/ && NF>0 { for(i=1;i<=NF;i++){ if(f==1) a[n1++]=$i; else b[n2++]=$i } }
  END { m=0; c=0; for(i=0;i<n1;i++){ if(a[i]+0<10){ d=a[i]-b[i]; if(d<0)d=-d; if(d>m)m=d; c++ } }
        printf "   map '"$c"' vs '"$first"' (PMF < 10 kT): %d voxels, largest difference %.2e kT\n", c, m }' $L/$first.dx $L/$c.dx
done
rm -f $L/*.dx
