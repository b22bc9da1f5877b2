// The HTTP side of dlsched-ingestd: libmicrohttpd with its internal polling thread and no thread
// pool, so requests are handled one at a time and the profile DB keeps a single writer. Routes:
// POST /v1/records and GET /v1/stats. Bodies are bounded: a Content-Length over the limit is
// answered 413 before the body is read; a chunked body is discarded past the limit. Connections are
// bounded in all and per client address (a connection over the address's limit is closed at once
// and counted); one idle for 30 s is closed.
#ifndef DLSCHED_INGESTD_HTTP_SERVER_H
#define DLSCHED_INGESTD_HTTP_SERVER_H

#include <sys/socket.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "ingest_service.h"
#include "log.h"

struct MHD_Daemon;
struct MHD_Connection;

namespace dlsched::ingest {

struct ListenAddress {
	sockaddr_storage addr{};
	socklen_t len = 0;
	std::string text;  // as given, for messages
};

// "ADDR:PORT", "[V6ADDR]:PORT" or "HOST:PORT"; port 0 takes any free port.
Result<ListenAddress> parse_listen(const std::string& text);

struct ServerLimits {
	std::size_t max_request = 262144;  // bytes of one body
	unsigned max_connections = 256;    // open at once
	unsigned max_per_ip = 16;          // open at once from one address
};

class HttpServer {
public:
	// Binds `where` only (MHD_OPTION_SOCK_ADDR) and starts the polling thread.
	static Result<std::unique_ptr<HttpServer>> start(const ListenAddress& where,
							 const ServerLimits& limits, IngestService& service,
							 Log& log);
	~HttpServer();
	HttpServer(const HttpServer&) = delete;
	HttpServer& operator=(const HttpServer&) = delete;

	std::uint16_t port() const;
	// Stops accepting, lets the requests in flight finish (at most `grace_s`), then stops.
	void stop(double grace_s);

private:
	HttpServer(IngestService& service, Log& log, const ServerLimits& limits)
	    : service_(service), log_(log), max_request_(limits.max_request), max_per_ip_(limits.max_per_ip)
	{
	}

	friend struct Callbacks;  // libmicrohttpd's callbacks (http_server.cpp)

	IngestService& service_;
	Log& log_;
	std::size_t max_request_;
	unsigned max_per_ip_;
	std::map<std::string, unsigned> open_per_ip_;  // only the polling thread touches it
	MHD_Daemon* daemon_ = nullptr;
	std::atomic<int> in_flight_{0};
};

}  // namespace dlsched::ingest

#endif
