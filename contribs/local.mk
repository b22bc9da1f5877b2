include contribs/sim/local.mk
