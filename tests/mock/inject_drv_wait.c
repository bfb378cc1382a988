// SPDX-License-Identifier: MIT
/*
 * A library built as $(MOCK_DIR)/drvwait/libcuda.so.1 for the injector's
 * tests (test_inject): drv_wait(fd) blocks in a read of fd the way a thread
 * waits inside a driver call (its return address into this library on the
 * thread's stack while it waits). The injector must not borrow such a
 * thread.
 */
#include <unistd.h>

__attribute__((visibility("default"), noinline)) int drv_wait(int fd)
{
	char c;
	ssize_t n = read(fd, &c, 1);

	/* work after the read: not a tail call, so the frame stays */
	return n == 1 ? c + 1 : -1;
}
