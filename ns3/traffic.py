# traffic.py SEED ARGS... : runs the ns-3 RDMA simulator's own flow
# generator (its traffic_gen/traffic_gen.py, run from that directory)
# with Python's random seeded, so that an input can be made again, then
# writes the flow count its first line should hold (the generator writes
# an estimate and patches it in place).
#
#   cd DEST/traffic_gen
#   python2 .../ns3/traffic.py 46 -c WebSearch_distribution.txt -n 320 -l 0.5 -b 100G -t 0.004 -o ws50_4ms.txt
import random
import runpy
import sys

sys.path.insert(0, ".")  # the generator's own modules, beside it
seed = int(sys.argv[1])
out = sys.argv[-1]
random.seed(seed)
sys.argv = ["traffic_gen.py"] + sys.argv[2:]
try:
    runpy.run_path("traffic_gen.py", run_name="__main__")
except SystemExit:
    pass
with open(out) as f:
    flows = [l for l in f.read().split("\n")[1:] if l.strip()]
with open(out, "w") as f:
    f.write("%d\n" % len(flows) + "\n".join(flows) + "\n")
