# Web-search flow sizes: the DCTCP workload (M. Alizadeh et al., "Data Center
# TCP (DCTCP)", SIGCOMM 2010, Fig. 4), as the piecewise CDF table used by
# pFabric (Alizadeh et al., SIGCOMM 2013) and shipped as
# WebSearch_distribution.txt with HPCC's simulator (Li et al., SIGCOMM 2019).
# Columns: flow size in bytes, cumulative probability. Sizes between points
# are interpolated linearly.
0 0.0
10000 0.15
20000 0.20
30000 0.30
50000 0.40
80000 0.53
200000 0.60
1000000 0.70
2000000 0.80
5000000 0.90
10000000 0.97
30000000 1.0
