include contribs/sim/local.mk
include contribs/data.mk
include contribs/cluster/local.mk
include contribs/replay/local.mk
include contribs/report/local.mk
include contribs/db/local.mk
include contribs/ingestd/local.mk
include contribs/progress/local.mk
