#include "http_server.h"

#include <microhttpd.h>
#include <netdb.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <thread>

#include "util/csv.h"

namespace dlsched::ingest {

namespace {

constexpr unsigned kIdleTimeoutS = 30;  // a connection that sends nothing for this long is closed

// One request's state between libmicrohttpd's calls.
struct PendingRequest {
	std::string peer;
	std::string body;
	std::size_t received = 0;
	bool too_large = false;
};

// Text from the request line, bounded and printable, for messages.
std::string quote(const std::string& s)
{
	std::string out = "'";
	for (std::size_t i = 0; i < s.size() && i < 64; ++i) {
		const unsigned char c = static_cast<unsigned char>(s[i]);
		out += c >= 0x20 && c < 0x7f && c != '\'' ? static_cast<char>(c) : '?';
	}
	return out + (s.size() > 64 ? "...'" : "'");
}

std::string address_text(const sockaddr* sa, socklen_t len)
{
	char host[NI_MAXHOST], serv[NI_MAXSERV];
	if (!sa ||
	    getnameinfo(sa, len, host, sizeof host, serv, sizeof serv, NI_NUMERICHOST | NI_NUMERICSERV) != 0)
		return "(unknown peer)";
	return sa->sa_family == AF_INET6 ? "[" + std::string(host) + "]:" + serv
					 : std::string(host) + ":" + serv;
}

// The client's address without its port: the key of the per-address connection limit.
std::string host_of(const sockaddr* sa)
{
	char host[NI_MAXHOST];
	if (!sa)
		return "?";
	const socklen_t len = sa->sa_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
	if (getnameinfo(sa, len, host, sizeof host, nullptr, 0, NI_NUMERICHOST) != 0)
		return "?";
	return host;
}

std::string peer_of(MHD_Connection* c)
{
	const MHD_ConnectionInfo* info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	if (!info || !info->client_addr)
		return "(unknown peer)";
	const socklen_t len =
		info->client_addr->sa_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
	return address_text(info->client_addr, len);
}

// "application/x-munge", whatever the case, parameters allowed ("; charset=...").
bool is_munge_type(const char* ct)
{
	if (!ct)
		return false;
	std::string t = ct;
	t = t.substr(0, t.find(';'));
	while (!t.empty() && (t.back() == ' ' || t.back() == '\t'))
		t.pop_back();
	return strcasecmp(t.c_str(), "application/x-munge") == 0;
}

MHD_Result answer(MHD_Connection* c, const Reply& r, const char* allow = nullptr, bool close = false)
{
	const std::string body = r.body + "\n";
	MHD_Response* resp = MHD_create_response_from_buffer(body.size(), const_cast<char*>(body.data()),
							     MHD_RESPMEM_MUST_COPY);
	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
	if (allow)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, allow);
	if (r.retry_after_s > 0)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER,
					std::to_string(r.retry_after_s).c_str());
	// Answered before the body was read: the rest of it is not read, so the connection ends here.
	if (close)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
	const MHD_Result ok = MHD_queue_response(c, static_cast<unsigned>(r.status), resp);
	MHD_destroy_response(resp);
	return ok;
}

}  // namespace

struct Callbacks {
	// The first call has the headers only; then the body comes in pieces; the last call has none.
	static MHD_Result on_request(void* cls, MHD_Connection* c, const char* url, const char* method,
				     const char* /*version*/, const char* upload_data,
				     std::size_t* upload_data_size, void** con_cls)
	{
		HttpServer* self = static_cast<HttpServer*>(cls);
		try {
			return self_handle(self, c, url ? url : "", method ? method : "", upload_data,
					   upload_data_size, con_cls);
		} catch (const std::exception& e) {
			self->log_.error(std::string("request dropped: ") + e.what());
		} catch (...) {
			self->log_.error("request dropped: unknown exception");
		}
		return MHD_NO;  // closes the connection
	}

	static MHD_Result self_handle(HttpServer* self, MHD_Connection* c, const std::string& url,
				      const std::string& method, const char* upload_data,
				      std::size_t* upload_data_size, void** con_cls)
	{
		IngestService& svc = self->service_;
		PendingRequest* req = static_cast<PendingRequest*>(*con_cls);
		if (!req) {
			req = new PendingRequest;
			*con_cls = req;
			++self->in_flight_;
			req->peer = peer_of(c);
			const bool has_body = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
									  MHD_HTTP_HEADER_CONTENT_LENGTH) ||
					      MHD_lookup_connection_value(c, MHD_HEADER_KIND,
									  MHD_HTTP_HEADER_TRANSFER_ENCODING);
			if (url == "/v1/records") {
				if (method != "POST")
					return answer(c,
						      svc.refuse(Refusal::kBadMethod, req->peer,
								 quote(method) + " " + url + ": use POST"),
						      "POST", has_body);
				const char* ct = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
									     MHD_HTTP_HEADER_CONTENT_TYPE);
				if (!is_munge_type(ct))
					return answer(
						c,
						svc.refuse(Refusal::kBadContentType, req->peer,
							   "Content-Type " +
								   (ct ? quote(ct) : std::string("missing")) +
								   ": send application/x-munge (one munge "
								   "credential)"),
						nullptr, has_body);
				const char* cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
									     MHD_HTTP_HEADER_CONTENT_LENGTH);
				long long n = 0;
				if (cl && parse_integer(cl, n) &&
				    n > static_cast<long long>(self->max_request_))
					return answer(c,
						      svc.refuse(Refusal::kTooLarge, req->peer,
								 "a body of " + std::to_string(n) +
									 " bytes is over the limit of " +
									 std::to_string(self->max_request_) +
									 " bytes (--max-request); send "
									 "smaller batches"),
						      nullptr, true);
				return MHD_YES;  // the body follows
			}
			if (url == "/v1/stats") {
				if (method != "GET" && method != "HEAD")
					return answer(c,
						      svc.refuse(Refusal::kBadMethod, req->peer,
								 quote(method) + " " + url + ": use GET"),
						      "GET, HEAD", has_body);
				return answer(c, svc.stats());
			}
			return answer(c,
				      svc.refuse(Refusal::kBadPath, req->peer,
						 "no such path " + quote(url) +
							 " (POST /v1/records, GET /v1/stats)"),
				      nullptr, has_body);
		}
		if (*upload_data_size) {
			// Past the limit (a chunked body, whose length was not announced) the rest is
			// dropped.
			const std::size_t n = *upload_data_size;
			req->received += n;
			if (!req->too_large && req->received > self->max_request_) {
				req->too_large = true;
				std::string().swap(req->body);
			}
			if (!req->too_large)
				req->body.append(upload_data, n);
			*upload_data_size = 0;
			return MHD_YES;
		}
		if (req->too_large)
			return answer(c,
				      svc.refuse(Refusal::kTooLarge, req->peer,
						 "a body of more than " + std::to_string(self->max_request_) +
							 " bytes (--max-request); send smaller batches"));
		return answer(c, svc.post_records(req->body, req->peer));
	}

	static void on_completed(void* cls, MHD_Connection* /*c*/, void** con_cls,
				 enum MHD_RequestTerminationCode /*toe*/)
	{
		HttpServer* self = static_cast<HttpServer*>(cls);
		PendingRequest* req = static_cast<PendingRequest*>(*con_cls);
		if (req) {
			delete req;
			*con_cls = nullptr;
			--self->in_flight_;
		}
	}

	// Before a connection is accepted: over its address's limit it is closed at once.
	static MHD_Result on_accept(void* cls, const sockaddr* addr, socklen_t len)
	{
		HttpServer* self = static_cast<HttpServer*>(cls);
		auto it = self->open_per_ip_.find(host_of(addr));
		if (it != self->open_per_ip_.end() && it->second >= self->max_per_ip_) {
			self->service_.connection_refused(address_text(addr, len));
			return MHD_NO;
		}
		return MHD_YES;
	}

	// Open connections per address (the key is kept in the connection's socket context).
	static void on_connection(void* cls, MHD_Connection* c, void** socket_context,
				  enum MHD_ConnectionNotificationCode code)
	{
		HttpServer* self = static_cast<HttpServer*>(cls);
		if (code == MHD_CONNECTION_NOTIFY_STARTED) {
			const MHD_ConnectionInfo* info =
				MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
			std::string* key = new std::string(host_of(info ? info->client_addr : nullptr));
			++self->open_per_ip_[*key];
			*socket_context = key;
		} else if (code == MHD_CONNECTION_NOTIFY_CLOSED && *socket_context) {
			std::string* key = static_cast<std::string*>(*socket_context);
			auto it = self->open_per_ip_.find(*key);
			if (it != self->open_per_ip_.end() && --it->second == 0)
				self->open_per_ip_.erase(it);
			delete key;
			*socket_context = nullptr;
		}
	}

	static void on_log(void* cls, const char* fmt, va_list ap)
	{
		char buf[512];
		std::vsnprintf(buf, sizeof buf, fmt, ap);
		std::string line = buf;
		while (!line.empty() && (line.back() == '\n' || line.back() == '\r'))
			line.pop_back();
		static_cast<HttpServer*>(cls)->log_.info("libmicrohttpd: " + line);
	}
};

Result<ListenAddress> parse_listen(const std::string& text)
{
	const std::string fix = "--listen " + text + ": give ADDRESS:PORT, e.g. 127.0.0.1:6820 or [::1]:6820";
	std::string host, port;
	if (!text.empty() && text[0] == '[') {
		const std::size_t close = text.find(']');
		if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':')
			return invalid_argument(fix);
		host = text.substr(1, close - 1);
		port = text.substr(close + 2);
	} else {
		const std::size_t colon = text.rfind(':');
		if (colon == std::string::npos)
			return invalid_argument(fix);
		host = text.substr(0, colon);
		port = text.substr(colon + 1);
	}
	long long p = -1;
	if (host.empty() || !parse_integer(port, p) || p < 0 || p > 65535)
		return invalid_argument(fix);
	addrinfo hints{};
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV;
	addrinfo* res = nullptr;
	const int rc = getaddrinfo(host.c_str(), port.c_str(), &hints, &res);
	if (rc != 0 || !res)
		return invalid_argument("--listen " + text + ": " + gai_strerror(rc) +
					" (give an address of this machine, e.g. 127.0.0.1:6820)");
	ListenAddress a;
	std::memcpy(&a.addr, res->ai_addr, res->ai_addrlen);
	a.len = res->ai_addrlen;
	a.text = address_text(res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
	return a;
}

Result<std::unique_ptr<HttpServer>> HttpServer::start(const ListenAddress& where, const ServerLimits& limits,
						      IngestService& service, Log& log)
{
	std::unique_ptr<HttpServer> s(new HttpServer(service, log, limits));
	// One polling thread, no thread pool, no thread per connection: one request at a time.
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_USE_ITC | MHD_USE_ERROR_LOG;
	if (where.addr.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	const std::uint16_t port =
		where.addr.ss_family == AF_INET6
			? ntohs(reinterpret_cast<const sockaddr_in6*>(&where.addr)->sin6_port)
			: ntohs(reinterpret_cast<const sockaddr_in*>(&where.addr)->sin_port);
	MHD_RequestCompletedCallback completed = &Callbacks::on_completed;
	MHD_LogCallback logger = &Callbacks::on_log;
	// The logger first, so that libmicrohttpd's messages about the other options reach our log.
	MHD_NotifyConnectionCallback connection = &Callbacks::on_connection;
	s->daemon_ = MHD_start_daemon(
		flags, port, &Callbacks::on_accept, s.get(), &Callbacks::on_request, s.get(),
		MHD_OPTION_EXTERNAL_LOGGER, logger, s.get(), MHD_OPTION_SOCK_ADDR,
		reinterpret_cast<const sockaddr*>(&where.addr), MHD_OPTION_NOTIFY_COMPLETED, completed,
		s.get(), MHD_OPTION_NOTIFY_CONNECTION, connection, s.get(), MHD_OPTION_CONNECTION_LIMIT,
		limits.max_connections, MHD_OPTION_CONNECTION_TIMEOUT, kIdleTimeoutS, MHD_OPTION_END);
	if (!s->daemon_)
		return io_error(
			"--listen " + where.text +
			": cannot listen there (libmicrohttpd's reason is logged above: the port in use, or "
			"an address not of this machine?)");
	return s;
}

HttpServer::~HttpServer()
{
	stop(0);
}

std::uint16_t HttpServer::port() const
{
	const MHD_DaemonInfo* info =
		daemon_ ? MHD_get_daemon_info(daemon_, MHD_DAEMON_INFO_BIND_PORT) : nullptr;
	return info ? info->port : 0;
}

void HttpServer::stop(double grace_s)
{
	if (!daemon_)
		return;
	const MHD_socket listen_fd = MHD_quiesce_daemon(daemon_);
	const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(grace_s);
	while (in_flight_.load() > 0 && std::chrono::steady_clock::now() < deadline)
		std::this_thread::sleep_for(std::chrono::milliseconds(20));
	MHD_stop_daemon(daemon_);
	daemon_ = nullptr;
	// A quiesced daemon leaves its listening socket to the caller.
	if (listen_fd != MHD_INVALID_SOCKET)
		close(listen_fd);
}

}  // namespace dlsched::ingest
