# models/: the learned policies, the only code that includes libtorch (configure: HAVE_TORCH). A
# libtool convenience library (PIC), so that the same objects go into dlsched-sim, dlsched-train and
# sched/dlsched.
EXTRA_DIST += models/README.md models/MODEL_CARD.md models/dl2.pt models/dl2-curve.csv

if HAVE_TORCH
noinst_LTLIBRARIES += models/libdlsched_models.la
models_libdlsched_models_la_SOURCES = \
	models/features.h \
	models/features.cpp \
	models/decode.h \
	models/decode.cpp \
	models/policy_model.h \
	models/policy_net.h \
	models/policy_model.cpp \
	models/learned.h \
	models/learned.cpp \
	models/train.h \
	models/train.cpp
models_libdlsched_models_la_CPPFLAGS = $(AM_CPPFLAGS) $(TORCH_CPPFLAGS) -DDLSCHED_SRCDIR='"$(abs_top_srcdir)"'
# libtorch's headers are not clean under our warning flags.
models_libdlsched_models_la_CXXFLAGS = $(AM_CXXFLAGS) -Wno-unused-parameter -Wno-sign-compare -Wno-shadow
models_libdlsched_models_la_LIBADD = common/libdlsched.la $(TORCH_LIBS)

endif
