// A C++ library for tests/test_native.py, built at test time with g++:
// cs_cxx_block(fd) blocks in read(fd) from inside a class member in a
// namespace, so the frames have names only demangling makes readable.
#include <unistd.h>

namespace csns {

class Waiter {
public:
	explicit Waiter(int fd) : fd_(fd) {}
	__attribute__((noinline)) long wait(int times);

private:
	__attribute__((noinline)) long once();
	int fd_;
};

long Waiter::once()
{
	char c;
	long n = read(fd_, &c, 1);
	asm volatile("" ::: "memory");  // not a tail call
	return n;
}

long Waiter::wait(int times)
{
	long total = 0;
	for (int i = 0; i < times; i++)
		total += once();
	return total;
}

}  // namespace csns

extern "C" long cs_cxx_block(int fd)
{
	csns::Waiter w(fd);
	long n = w.wait(1);
	asm volatile("" ::: "memory");
	return n;
}
