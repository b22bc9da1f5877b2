// Who sent a batch: the body of POST /v1/records is one munge credential, and munged says whether it
// is valid (our key, not expired, not replayed) and which uid made it. An interface, so that the
// service can be driven without a munged.
#ifndef DLSCHED_INGESTD_MUNGE_AUTH_H
#define DLSCHED_INGESTD_MUNGE_AUTH_H

#include <sys/types.h>

#include <memory>
#include <string>

#include "util/status.h"

namespace dlsched::ingest {

struct Credential {
	uid_t uid = 0;
	gid_t gid = 0;
	std::string payload;
};

struct AuthResult {
	enum class Kind {
		kOk,
		kBadCredential,  // invalid, forged, expired, replayed: the sender's fault (401)
		kUnavailable,    // munged cannot be asked: ours (503, retry)
	};
	Kind kind = Kind::kOk;
	std::string message;
	Credential cred;
};

class Authenticator {
public:
	virtual ~Authenticator() = default;
	virtual AuthResult decode(const std::string& body) = 0;
};

class MungeAuth : public Authenticator {
public:
	// `socket`: munged's socket ("" for munge's default).
	static Result<std::unique_ptr<MungeAuth>> create(const std::string& socket);
	~MungeAuth() override;
	MungeAuth(const MungeAuth&) = delete;
	MungeAuth& operator=(const MungeAuth&) = delete;

	AuthResult decode(const std::string& body) override;
	// Asks munged for a credential: an error says munged cannot be reached at the socket.
	Status check();

private:
	MungeAuth(void* ctx, std::string socket) : ctx_(ctx), socket_(std::move(socket)) {}
	void* ctx_;  // munge_ctx_t
	std::string socket_;
};

}  // namespace dlsched::ingest

#endif
