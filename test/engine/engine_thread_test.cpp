// Kept engine threads (util/engine_thread.h): a task runs on a thread a
// finished one left, with every signal blocked, and leaves nothing of
// itself there; a forked child starts with none of them.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <thread>

#include "index/huge_pages.h"
#include "util/engine_thread.h"
#include "util/mem_account.h"

using namespace scipis;

namespace {
std::thread::id run_and_get_id() {
  std::thread::id id;
  EngineThread t([&] { id = std::this_thread::get_id(); });
  t.join();
  return id;
}
}  // namespace

TEST(EngineThread, AFinishedTasksThreadRunsTheNext) {
  const std::thread::id first = run_and_get_id();
  EXPECT_NE(first, std::this_thread::get_id());
  EXPECT_GE(engine_threads_idle(), 1u);
  // Several idle: the next task takes the one most recently idle.
  EXPECT_EQ(run_and_get_id(), run_and_get_id());
}

TEST(EngineThread, TasksRunAtOnceWhenNoneIsIdle) {
  // Pipeline stages wait for each other: every task must run at once.
  std::atomic<int> arrived{0};
  std::vector<EngineThread> ts;
  for (int i = 0; i < 6; i++)
    ts.emplace_back([&] {
      arrived++;
      while (arrived.load() < 6) std::this_thread::yield();
    });
  for (auto& t : ts) t.join();
  EXPECT_EQ(arrived.load(), 6);
}

TEST(EngineThread, EverySignalIsBlockedWhateverTheCallersMask) {
  sigset_t none, old;
  sigemptyset(&none);
  pthread_sigmask(SIG_SETMASK, &none, &old);
  for (bool own : {false, true}) {
    for (int round = 0; round < 2; round++) {  // a new thread, then a kept one
      bool term = false, intr = false, usr = false;
      EngineThread t(
          [&] {
            sigset_t m;
            pthread_sigmask(SIG_BLOCK, nullptr, &m);
            term = sigismember(&m, SIGTERM);
            intr = sigismember(&m, SIGINT);
            usr = sigismember(&m, SIGUSR1);
          },
          own);
      t.join();
      EXPECT_TRUE(term && intr && usr) << "own " << own << " round " << round;
    }
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

TEST(EngineThread, JoinReturnsAfterWhatTheTaskHeldIsGone) {
  auto held = std::make_shared<int>(7);
  std::weak_ptr<int> seen = held;
  EngineThread t([h = std::move(held)] { EXPECT_EQ(*h, 7); });
  t.join();
  EXPECT_TRUE(seen.expired());
  EXPECT_FALSE(t.joinable());
}

TEST(EngineThread, AKeptThreadGivesBackTheHugePagesItKept) {
  const size_t before = mem::held();
  EngineThread t([] {
    keep_freed_huge_pages();
    void* p = huge_alloc(4 * kHugePage);
    huge_free(p, 4 * kHugePage);  // kept by this thread, still charged
  });
  t.join();
  EXPECT_EQ(mem::held(), before);
}

TEST(EngineThread, AnOwnThreadsNiceLevelStaysWithIt) {
  const int base = getpriority(PRIO_PROCESS, 0);
  EngineThread own(
      [] { ASSERT_EQ(setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), 19), 0); }, true);
  own.join();
  int seen = -100;
  for (int i = 0; i < 4; i++) {
    EngineThread t([&] { seen = getpriority(PRIO_PROCESS, static_cast<id_t>(::gettid())); });
    t.join();
    EXPECT_EQ(seen, base);
  }
}

TEST(EngineThread, AForkedChildStartsItsOwnThreads) {
  run_and_get_id();
  ASSERT_GE(engine_threads_idle(), 1u);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    alarm(60);  // a task handed to a thread the child does not have would hang
    int ran = 0;
    {
      EngineThread t([&] { ran = 1; });
      t.join();
    }
    _exit(ran == 1 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "child killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0);
}
