#include "munge_auth.h"

#include <munge.h>

#include <cstdlib>

namespace dlsched::ingest {

Result<std::unique_ptr<MungeAuth>> MungeAuth::create(const std::string& socket)
{
	munge_ctx_t ctx = munge_ctx_create();
	if (!ctx)
		return internal_error("munge: cannot create a context (out of memory)");
	if (!socket.empty()) {
		const munge_err_t e = munge_ctx_set(ctx, MUNGE_OPT_SOCKET, socket.c_str());
		if (e != EMUNGE_SUCCESS) {
			std::string why =
				munge_ctx_strerror(ctx) ? munge_ctx_strerror(ctx) : munge_strerror(e);
			munge_ctx_destroy(ctx);
			return invalid_argument("--munge-socket " + socket + ": " + why);
		}
	}
	return std::unique_ptr<MungeAuth>(new MungeAuth(ctx, socket));
}

Status MungeAuth::check()
{
	munge_ctx_t ctx = static_cast<munge_ctx_t>(ctx_);
	char* cred = nullptr;
	const munge_err_t e = munge_encode(&cred, ctx, nullptr, 0);
	std::free(cred);
	if (e == EMUNGE_SUCCESS)
		return Status::ok();
	const char* why = munge_ctx_strerror(ctx);
	return io_error("munged" + (socket_.empty() ? std::string() : " at " + socket_) + ": " +
			(why ? why : munge_strerror(e)));
}

MungeAuth::~MungeAuth()
{
	munge_ctx_destroy(static_cast<munge_ctx_t>(ctx_));
}

AuthResult MungeAuth::decode(const std::string& body)
{
	AuthResult r;
	// A credential is one line of text; `munge` output ends with a newline.
	std::string cred = body;
	while (!cred.empty() && (cred.back() == '\n' || cred.back() == '\r' || cred.back() == ' '))
		cred.pop_back();
	if (cred.empty() || cred.find('\0') != std::string::npos) {
		r.kind = AuthResult::Kind::kBadCredential;
		r.message = cred.empty() ? "no munge credential in the body"
					 : "the body is not a munge credential";
		return r;
	}
	munge_ctx_t ctx = static_cast<munge_ctx_t>(ctx_);
	void* buf = nullptr;
	int len = 0;
	uid_t uid = 0;
	gid_t gid = 0;
	const munge_err_t e = munge_decode(cred.c_str(), ctx, &buf, &len, &uid, &gid);
	// Some errors (expired, replayed, rewound) still hand back the payload: never use it.
	if (e != EMUNGE_SUCCESS) {
		std::free(buf);
		const char* why = munge_ctx_strerror(ctx);
		r.message = std::string("munge: ") + (why ? why : munge_strerror(e));
		switch (e) {
			case EMUNGE_SNAFU:
			case EMUNGE_NO_MEMORY:
			case EMUNGE_SOCKET:
			case EMUNGE_TIMEOUT:
				r.kind = AuthResult::Kind::kUnavailable;
				break;
			default:
				r.kind = AuthResult::Kind::kBadCredential;
				break;
		}
		return r;
	}
	r.cred.uid = uid;
	r.cred.gid = gid;
	if (buf && len > 0)
		r.cred.payload.assign(static_cast<const char*>(buf), static_cast<std::size_t>(len));
	std::free(buf);
	return r;
}

}  // namespace dlsched::ingest
