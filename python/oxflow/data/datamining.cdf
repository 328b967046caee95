# Data-mining flow sizes: the VL2 workload (A. Greenberg et al., "VL2: A
# Scalable and Flexible Data Center Network", SIGCOMM 2009, Fig. 2), as the
# piecewise CDF table published with pFabric (Alizadeh et al., SIGCOMM 2013)
# and PIAS (Bai et al., NSDI 2015, file CDF_dmining.tcl).
# Columns: flow size in bytes (1460-byte segments x 1460), cumulative
# probability. Sizes between points are interpolated linearly.
1460 0.0
1460 0.50
2920 0.60
4380 0.70
10220 0.80
389820 0.90
3076220 0.95
97333820 0.99
973333820 1.0
