# cmux-tray's words in English: the catalogue every other language follows.
#
# Ids are grouped by where they are shown. A `page-` message goes to the windows' pages, which
# fill each `{ $name }` themselves: such a message selects on no variable.
# Adding a language: docs/languages.md.

language-name = English

## Times (view/times.rs). `$time` and `$date` come already in the person's locale.

ago-just-now = just now
ago-minutes = { $n } min ago
ago-hours = { $n } h ago
ago-yesterday = yesterday
ago-days = { $n } days ago
day-today = Today
day-yesterday = Yesterday
span-seconds = { $n } s
span-minutes = { $n } min
span-hours = { $n } h
span-hours-minutes = { $h } h { $m } min
span-days = { $n ->
    [one] 1 day
   *[other] { $n } days
}
until-today = until { $time }
until-tomorrow = until { $time } tomorrow
until-later = until { $date }, { $time }
from-today = at { $time }
from-tomorrow = at { $time } tomorrow
from-later = on { $date } at { $time }

## Banners (notice/, policy/).

run-title = Cloud Run
run-finished = Run finished
run-failed = Run failed
run-timed-out = Run timed out
run-cancelled = Run cancelled
handoff-title = Cloud task
handoff-done = Done
handoff-failed = Failed
handoff-needs-you = Needs you
local-needs-you = { $title } needs you
coalesced-runs = { $n } Runs ended
coalesced-handoffs = { $n } hand-off updates
coalesced-terminals = { $n } notices from your terminals
summary-paused = { $n ->
    [one] 1 notice while notifications were paused
   *[other] { $n } notices while notifications were paused
}
summary-away = { $n ->
    [one] 1 notice while you were away
   *[other] { $n } notices while you were away
}
list-more = { $list } and { $n } more
sign-in-again-title = cmux-tray: sign in again
sign-in-again-body = The cloud refused the access token; Runs and hand-offs are not being followed.
stopped-title = cmux-tray stopped unexpectedly
stopped-body = What it was doing is in the log: { $log }
no-tray-title = cmux-tray has no icon: this desktop shows no tray icons
no-tray-body = It keeps working. On GNOME, install gnome-shell-extension-appindicator (Debian, Fedora), then run: gnome-extensions enable appindicatorsupport@rgcjonas.gmail.com (or use the Extensions app)

## The tray menu (view/tray.rs, the app's tray).

menu-sign-in = Sign in…
menu-sign-in-again = Sign in again ({ $email })
menu-account-team = { $email } — { $team }
menu-run = Run { $id }
menu-handoff = Hand-off { $id }
menu-team = Team
menu-sign-out = Sign out
menu-why = Why: { $why }
menu-open-log-folder = Open the log folder
menu-nothing-followed = Nothing is being followed
menu-following = Following ({ $n })
menu-last-notices = Last notices
menu-last-notices-unread = Last notices ({ $n } unread)
menu-mark-all-read = Mark all read
menu-pause-hour = For 1 hour
menu-pause-tomorrow = Until tomorrow
menu-resume = Resume
menu-paused = Notifications paused ({ $until })
menu-paused-until-resumed = Notifications paused (until you resume)
menu-pause = Pause notifications
menu-settings = Settings…
menu-about = About cmux-tray
menu-version = cmux-tray { $version }
menu-licence = Licence: { $licence }
menu-logs = Logs: { $dir }
menu-quit = Quit
menu-unread = { $n } unread
update-available = Version { $version } is available
update-by-package-manager = On Linux the package manager updates cmux-tray (apt, dnf).
update-none = No newer version is offered now.
update-no-window = The window that asked has closed.
sign-in-in-file = Sign-in kept in a private file: no keyring found

## Problems, as one short line (status.rs).

problem-offline = Offline: the cloud cannot be reached
problem-not-saved = A banner could not be saved as shown; it is kept in memory
problem-banner-not-shown = A banner could not be shown
problem-banners-off = Banners are turned off for cmux-tray
problem-no-server = No notification server: banners wait for one
problem-token-refused = The cloud refused the sign-in: sign in again
problem-sign-in-not-found = The saved sign-in was not found: sign in again
problem-sign-in-other-cloud = The saved sign-in is for another cloud: sign in again
problem-sign-in-not-kept = The sign-in could not be saved
problem-sign-in-not-read = The saved sign-in could not be read
problem-sign-in-not-removed = The saved sign-in could not be removed
problem-delivery-settings = The delivery settings were refused; the last good ones stay
problem-too-many-follows = Following { $max } items, the most at once: { $id } was not followed
problem-follow-not-saved = A follow could not be saved
problem-answer-not-saved = An answer could not be saved; it is asked for again
problem-unreadable = The cloud sent something that could not be read

## The history (view/history.rs, service/click.rs).

kind-run = Run
kind-handoff = Hand-off
kind-terminal = Terminal
kind-app = cmux-tray
kinds-all = All
kinds-run = Runs
kinds-handoff = Hand-offs
kinds-terminal = Terminals
kinds-app = cmux-tray
no-banner-untold = Not shown yet: waiting for its banner
no-banner-untold-no-server = Not shown yet: no notification server is running; it shows when one starts
no-banner-untold-system-off = Not shown yet: banners are turned off for cmux-tray in the system
no-banner-silent = No banner: it was already so when it was first seen
no-banner-off-run = No banner: banners for Runs were off
no-banner-off-handoff = No banner: banners for hand-offs were off
no-banner-off-terminal = No banner: banners for terminals were off
no-banner-off-app = No banner: banners for cmux-tray were off
no-banner-paused = No banner: notifications were paused
no-banner-quiet = No banner: quiet hours were on
no-banner-focused-terminal = No banner: you were looking at its terminal
no-banner-focused = No banner: you were looking at it
no-banner-coalesced = Grouped with others into one banner
no-banner-not-shown = The desktop did not show its banner
no-banner-not-shown-why = The desktop did not show its banner: { $why }
history-empty = No notices yet. A Run's end, a hand-off's turn and a terminal's news will be listed here.
history-empty-all = No notices in the history.
history-empty-run = No Runs in the history.
history-empty-handoff = No hand-offs in the history.
history-empty-terminal = No terminals' notices in the history.
history-empty-app = No notices of cmux-tray in the history.
history-no-match = Nothing matches “{ $query }”.
follow-running = Running for { $span }
follow-open = Open for { $span }
follow-since = Followed since { $time }
opens-surface = Opens its cmux surface
opens-workspace = Opens a workspace on { $host }
opens-workspace-unknown = Opens a workspace on its host
opens-terminal = Brings { $place } forward
opens-run-card = Opens the Run's card
opens-handoff-card = Opens the hand-off's card
opens-history = Opens the history
outcome-finished = finished
outcome-failed = failed
outcome-timed-out = timed out
outcome-cancelled = cancelled
reveal-gone = { $why }, so this is what it said.
reveal-failed = It could not be brought forward ({ $why }), so this is what it said.

## Settings (view/settings_page.rs).

quiet-off = Quiet hours are off.
quiet-no-window = Quiet hours are on, but no window is set: add one below.
quiet-now = Quiet now, { $until }.
quiet-now-breaks-through = Quiet now, { $until }. “Needs you” still shows.
quiet-not-now-starts = Not quiet now. Quiet hours start { $from }.
quiet-not-now = Not quiet now.
pause-not = Not paused.
pause-until-resumed = Paused until you resume.
pause-until = Paused { $until }.
kept-keyring = Your sign-in is kept in the system keyring.
kept-file = Your sign-in is kept in a private file, because the system keyring could not be reached.
kept-file-why = The keyring said: { $why }. The file is { $path }, readable by you alone.
kept-memory = Signed in with a token, kept in memory until cmux-tray quits: nothing is saved.
setting-banners = Show banners
setting-sounds = Play sounds
setting-attention = Mark “needs you” banners as urgent
setting-source-banners = Banners
setting-source-sounds = Sounds
source-runs = Cloud Runs
source-handoffs = Hand-offs
source-terminals = Terminals
setting-sound-cooldown = Seconds between two sounds of one source
setting-coalesce-count = How many notices make a burst
setting-coalesce-window = Seconds a burst is counted over
setting-history-days = Days the history keeps a notice
setting-quiet = Quiet hours
setting-breaks-through = “Needs you” breaks through
setting-remote-tmux = Over cmux-tray ssh: a click selects the remote tmux pane, and no banner shows while you look at it
language-system = The system's ({ $language })

## Sign-in (view/signin.rs).

signin-waiting = Waiting for you to confirm the code in your browser…
signin-good-for = The code is good for { $span }.
signin-done = Signed in as { $email }.
signin-done-detail = You can close this window: cmux-tray keeps you signed in.
signin-expired = This code expired before it was confirmed.
signin-expired-detail = Get a new code and confirm it in the browser.
signin-refused = The sign-in did not go through.

## The pages (ui/). Each `{ $name }` is filled by the page.

page-history-title = cmux-tray — History
page-settings-title = cmux-tray — Settings
page-signin-title = cmux-tray — Sign in
page-history = History
page-following = Following
page-notices = Notices
page-mark-all-read = Mark all read
page-filter-kinds = Show notices of one kind
page-search = Search notices
page-unread = { $n } unread
page-unread-mark = , unread
page-kind-count = { $label } ({ $n })
page-nothing-followed = Nothing is being followed.
page-run-pending = { $state }. A banner comes when it ends.
page-run-gone = This Run's card is gone (cards are kept 7 days).
page-summary = Summary
page-link = Link
page-session = Session
page-host = Host
page-run = Run
page-receipt = Receipt
page-no-receipt = No receipt.
page-outcome = Outcome: { $outcome }
page-ended = ended { $when }
page-handoff = Hand-off
page-handoff-id = Hand-off { $id }
page-handoff-not-followed = Not followed here.
page-handoff-closed = Closed.
page-handoff-open = Open, followed.
page-no-turn = No turn has ended yet.
page-notice = Notice
page-notice-gone = This notice is no longer kept.
page-settings = Settings
page-account = Account
page-why = Why?
page-team = Team
page-personal = { $name } (personal)
page-teams-error = Teams could not be listed: { $why }
page-team-chosen = Team { $team } chosen: its Runs and hand-offs are followed
page-sign-in = Sign in…
page-sign-in-again = Sign in again…
page-sign-out = Sign out
page-signed-out = Signed out; the saved sign-in was deleted
page-not-signed-in = Not signed in.
page-signed-in-as = Signed in as { $email }
page-signed-out-of = Signed out of { $email }
page-notifications = Notifications
page-per-source = Banners and sounds per source
page-from = From
page-banners = Banners
page-sounds = Sounds
page-switch-on = { $label } on
page-switch-off = { $label } off
page-source-switch = { $what } for { $source }
page-source-switch-on = { $what } for { $source } on
page-source-switch-off = { $what } for { $source } off
page-saved = Saved
page-cooldown-before = One sound per source every
page-seconds = seconds
page-burst-before = Group bursts of more than
page-burst-within = within
page-history-before = Keep the history for
page-days = days
page-quiet-hours = Quiet hours
page-quiet-windows = Quiet-hours windows
page-add-window = Add a window
page-time-zone = Time zone
page-system-zone = The system's ({ $zone })
page-window = Window { $n }
page-window-days = Days of window { $n }
page-window-from = From
page-window-to = to
page-window-from-label = From (window { $n }, HH:MM)
page-window-to-label = To (window { $n }, HH:MM)
page-remove = Remove
page-remove-window = Remove window { $n }
page-no-window = No window yet.
page-quiet-saved = Quiet hours saved
page-zone-saved = Time zone saved
page-pause = Pause
page-pause-hour = For an hour
page-pause-tomorrow = Until tomorrow
page-pause-until-resumed = Until I resume
page-resume = Resume now
page-paused = Paused
page-resumed = Resumed
page-general = General
page-open-at-login = Open at login
page-open-at-login-on = Open at login on
page-open-at-login-off = Open at login off
page-language = Language
page-language-saved = Saved; applies when cmux-tray restarts
page-install-update = Install and restart
page-update-checking = Checking the update…
page-update-downloading = Downloading version { $version }…
page-update-downloading-percent = Downloading version { $version }: { $percent } %
page-update-installing = Installing version { $version }; cmux-tray starts again…
page-update-failed = The update failed: { $why }
page-advanced = Advanced
page-advanced-hint = Staging or a self-hosted cloud, a proxy to it, the local socket. Empty means the default. These apply when cmux-tray starts again.
page-default = default
page-applies-on-restart = Saved; applies when cmux-tray restarts
page-in-use = In use now: { $value }
page-restart = Restart cmux-tray now
page-log = Log: { $dir }
page-open-history = History…
page-open-settings = Settings…
page-quit = Quit cmux-tray
page-signin-heading = Sign in to cmux
page-signin-confirm = Confirm this code on the cmux page that opened in your browser:
page-signin-code = Sign-in code
page-copy-code = Copy code
page-copied = Copied
page-open-page-again = Open the page again
page-getting-code = Getting a code…
page-new-code = Get a new code
page-paste-token = Or paste a token
page-token-hint = For a service that issues API tokens. A pasted token is kept until cmux-tray quits; the code above keeps you signed in.
page-api-token = API token
page-use-token = Sign in with this token
page-open-yourself = Open the page yourself: { $why }
page-could-not-start = The sign-in could not start.
page-no-token = No token was given.

## The settings' connection part (the app's pages.rs).

connection-api-url = The cloud API's origin (staging: https://cloud-api-staging.cmux.dev)
connection-auth-url = The sign-in origin
connection-proxy = The proxy to the cloud (http://host:port, socks5://host:port), or none; empty: the environment's
connection-socket-path = Where the local socket lives (an absolute path)
connection-updates-feed = A release feed asked once a day for a newer version (an https URL); empty: no check
