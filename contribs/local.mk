include contribs/sim/local.mk
include contribs/data.mk
