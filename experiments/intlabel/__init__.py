"""INT-label: the paper's analysis (section 4) and its figures.

``theory`` holds the closed forms of section 4 (hop counts on a k-ary fat-tree, labeling-times
distributions of Base A and Base B, coverage under delay jitter) and a Monte Carlo model of
per-port labeling that checks them; ``counting`` holds the probe-generator and bandwidth
counts behind figures 20 and 21.
"""
