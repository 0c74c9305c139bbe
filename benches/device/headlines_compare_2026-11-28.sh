mkdir -p /work && ln -sfn "$PWD" /work/main; cd .device && xz -d *.xz; chmod +x *; cd ..; for f in .gl/*.deb; do dpkg -x $f / >/dev/null 2>&1; done; ldconfig; export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json; mkdir -p /tmp/c
for r in 1 2; do for b in old new; do
 echo "== $b round $r"
 timeout 60 .device/$b-bench --molsurf --molsurf-atoms 100000,1000000 --repeats 9 --json /tmp/c/molsurf_${b}_$r.json 2>/dev/null | grep "^molsurf"
 timeout 40 .device/$b-bench --no-mo --no-dcs --rdf-atoms none --playback --orbitals-on render-device --playback-only HOMO --json /tmp/c/play_${b}_$r.json 2>/dev/null | grep "^playback" | cut -c1-220
 timeout 40 .device/$b-bench --cartoon --cartoon-on render-device --repeats 10 --json /tmp/c/cartoon_${b}_$r.json 2>/dev/null | grep "x 468" | cut -c1-240
done; done
tar czf $OUT/cmp.tgz -C /tmp c
