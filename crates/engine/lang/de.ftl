# cmux-tray auf Deutsch. Dieselben Ids und Variablen wie en.ftl (die Tests prüfen es).

language-name = Deutsch

## Zeiten

ago-just-now = gerade eben
ago-minutes = vor { $n } Min.
ago-hours = vor { $n } Std.
ago-yesterday = gestern
ago-days = vor { $n } Tagen
day-today = Heute
day-yesterday = Gestern
span-seconds = { $n } s
span-minutes = { $n } Min.
span-hours = { $n } Std.
span-hours-minutes = { $h } Std. { $m } Min.
span-days = { $n ->
    [one] 1 Tag
   *[other] { $n } Tage
}
until-today = bis { $time }
until-tomorrow = bis morgen { $time }
until-later = bis { $date }, { $time }
from-today = um { $time }
from-tomorrow = morgen um { $time }
from-later = am { $date } um { $time }

## Banner

run-title = Cloud-Run
run-finished = Run abgeschlossen
run-failed = Run fehlgeschlagen
run-timed-out = Run hat das Zeitlimit überschritten
run-cancelled = Run abgebrochen
handoff-title = Cloud-Aufgabe
handoff-done = Fertig
handoff-failed = Fehlgeschlagen
handoff-needs-you = Braucht dich
local-needs-you = { $title } braucht dich
coalesced-runs = { $n } Runs beendet
coalesced-handoffs = { $n } Neuigkeiten zu Übergaben
coalesced-terminals = { $n } Meldungen aus deinen Terminals
summary-paused = { $n ->
    [one] 1 Meldung, während Benachrichtigungen pausiert waren
   *[other] { $n } Meldungen, während Benachrichtigungen pausiert waren
}
summary-away = { $n ->
    [one] 1 Meldung, während du weg warst
   *[other] { $n } Meldungen, während du weg warst
}
list-more = { $list } und { $n } weitere
sign-in-again-title = cmux-tray: bitte erneut anmelden
sign-in-again-body = Die Cloud hat das Zugriffstoken abgelehnt; Runs und Übergaben werden nicht verfolgt.
stopped-title = cmux-tray wurde unerwartet beendet
stopped-body = Was es gerade tat, steht im Protokoll: { $log }
no-tray-title = cmux-tray hat kein Symbol: diese Arbeitsfläche zeigt keine Tray-Symbole
no-tray-body = Es arbeitet weiter. Unter GNOME gnome-shell-extension-appindicator installieren (Debian, Fedora), dann: gnome-extensions enable appindicatorsupport@rgcjonas.gmail.com (oder in der App Erweiterungen)

## Tray-Menü

menu-sign-in = Anmelden…
menu-sign-in-again = Erneut anmelden ({ $email })
menu-account-team = { $email } — { $team }
menu-run = Run { $id }
menu-handoff = Übergabe { $id }
menu-team = Team
menu-sign-out = Abmelden
menu-why = Warum: { $why }
menu-open-log-folder = Protokollordner öffnen
menu-nothing-followed = Nichts wird verfolgt
menu-following = Verfolgt ({ $n })
menu-last-notices = Letzte Meldungen
menu-last-notices-unread = Letzte Meldungen ({ $n } ungelesen)
menu-mark-all-read = Alle als gelesen markieren
menu-pause-hour = Für 1 Stunde
menu-pause-tomorrow = Bis morgen
menu-resume = Fortsetzen
menu-paused = Benachrichtigungen pausiert ({ $until })
menu-paused-until-resumed = Benachrichtigungen pausiert (bis du fortsetzt)
menu-pause = Benachrichtigungen pausieren
menu-settings = Einstellungen…
menu-about = Über cmux-tray
menu-version = cmux-tray { $version }
menu-licence = Lizenz: { $licence }
menu-logs = Protokolle: { $dir }
menu-quit = Beenden
menu-unread = { $n } ungelesen
update-available = Version { $version } ist verfügbar
update-by-package-manager = Unter Linux aktualisiert die Paketverwaltung cmux-tray (apt, dnf).
update-none = Gerade wird keine neuere Version angeboten.
update-no-window = Das Fenster, das gefragt hat, ist geschlossen.
sign-in-in-file = Anmeldung in einer privaten Datei: kein Schlüsselbund gefunden

## Probleme

problem-offline = Offline: die Cloud ist nicht erreichbar
problem-not-saved = Ein Banner konnte nicht als gezeigt gespeichert werden; es bleibt im Speicher
problem-banner-not-shown = Ein Banner konnte nicht gezeigt werden
problem-banners-off = Banner sind für cmux-tray ausgeschaltet
problem-no-server = Kein Benachrichtigungsdienst: Banner warten auf einen
problem-token-refused = Die Cloud hat die Anmeldung abgelehnt: bitte erneut anmelden
problem-sign-in-not-found = Die gespeicherte Anmeldung wurde nicht gefunden: bitte erneut anmelden
problem-sign-in-other-cloud = Die gespeicherte Anmeldung gehört zu einer anderen Cloud: bitte erneut anmelden
problem-sign-in-not-kept = Die Anmeldung konnte nicht gespeichert werden
problem-sign-in-not-read = Die gespeicherte Anmeldung konnte nicht gelesen werden
problem-sign-in-not-removed = Die gespeicherte Anmeldung konnte nicht entfernt werden
problem-delivery-settings = Die Zustell-Einstellungen wurden abgelehnt; die letzten gültigen bleiben
problem-too-many-follows = { $max } Einträge werden verfolgt, mehr geht nicht: { $id } wird nicht verfolgt
problem-follow-not-saved = Eine Verfolgung konnte nicht gespeichert werden
problem-answer-not-saved = Eine Antwort konnte nicht gespeichert werden; sie wird erneut abgefragt
problem-unreadable = Die Cloud hat etwas Unlesbares geschickt

## Verlauf

kind-run = Run
kind-handoff = Übergabe
kind-terminal = Terminal
kind-app = cmux-tray
kinds-all = Alle
kinds-run = Runs
kinds-handoff = Übergaben
kinds-terminal = Terminals
kinds-app = cmux-tray
no-banner-untold = Noch nicht gezeigt: wartet auf sein Banner
no-banner-untold-no-server = Noch nicht gezeigt: kein Benachrichtigungsdienst läuft; es erscheint, sobald einer startet
no-banner-untold-system-off = Noch nicht gezeigt: Banner sind für cmux-tray im System ausgeschaltet
no-banner-silent = Kein Banner: es war schon so, als es zum ersten Mal gesehen wurde
no-banner-off-run = Kein Banner: Banner für Runs waren aus
no-banner-off-handoff = Kein Banner: Banner für Übergaben waren aus
no-banner-off-terminal = Kein Banner: Banner für Terminals waren aus
no-banner-off-app = Kein Banner: Banner für cmux-tray waren aus
no-banner-paused = Kein Banner: Benachrichtigungen waren pausiert
no-banner-quiet = Kein Banner: Ruhezeit war aktiv
no-banner-focused-terminal = Kein Banner: du hast auf sein Terminal geschaut
no-banner-focused = Kein Banner: du hast darauf geschaut
no-banner-coalesced = Mit anderen zu einem Banner zusammengefasst
no-banner-not-shown = Der Desktop hat sein Banner nicht gezeigt
no-banner-not-shown-why = Der Desktop hat sein Banner nicht gezeigt: { $why }
history-empty = Noch keine Meldungen. Das Ende eines Runs, der Zug einer Übergabe und Neuigkeiten eines Terminals erscheinen hier.
history-empty-all = Keine Meldungen im Verlauf.
history-empty-run = Keine Runs im Verlauf.
history-empty-handoff = Keine Übergaben im Verlauf.
history-empty-terminal = Keine Meldungen von Terminals im Verlauf.
history-empty-app = Keine Meldungen von cmux-tray im Verlauf.
history-no-match = Nichts passt zu „{ $query }“.
follow-running = Läuft seit { $span }
follow-open = Offen seit { $span }
follow-since = Verfolgt seit { $time }
opens-surface = Öffnet seine cmux-Oberfläche
opens-workspace = Öffnet einen Arbeitsbereich auf { $host }
opens-workspace-unknown = Öffnet einen Arbeitsbereich auf seinem Host
opens-terminal = Holt { $place } nach vorn
opens-run-card = Öffnet die Karte des Runs
opens-handoff-card = Öffnet die Karte der Übergabe
opens-history = Öffnet den Verlauf
outcome-finished = abgeschlossen
outcome-failed = fehlgeschlagen
outcome-timed-out = Zeitlimit überschritten
outcome-cancelled = abgebrochen
reveal-gone = { $why }, darum steht hier, was es gesagt hat.
reveal-failed = Es konnte nicht nach vorn geholt werden ({ $why }), darum steht hier, was es gesagt hat.

## Einstellungen

quiet-off = Ruhezeiten sind aus.
quiet-no-window = Ruhezeiten sind an, aber kein Zeitfenster ist gesetzt: unten eines hinzufügen.
quiet-now = Jetzt Ruhezeit, { $until }.
quiet-now-breaks-through = Jetzt Ruhezeit, { $until }. „Braucht dich“ wird trotzdem gezeigt.
quiet-not-now-starts = Jetzt keine Ruhezeit. Die Ruhezeit beginnt { $from }.
quiet-not-now = Jetzt keine Ruhezeit.
pause-not = Nicht pausiert.
pause-until-resumed = Pausiert, bis du fortsetzt.
pause-until = Pausiert { $until }.
kept-keyring = Deine Anmeldung liegt im Schlüsselbund des Systems.
kept-file = Deine Anmeldung liegt in einer privaten Datei, weil der Schlüsselbund des Systems nicht erreichbar war.
kept-file-why = Der Schlüsselbund meldete: { $why }. Die Datei ist { $path } und nur für dich lesbar.
kept-memory = Mit einem Token angemeldet, das bis zum Beenden von cmux-tray im Speicher bleibt: nichts wird gespeichert.
setting-banners = Banner zeigen
setting-sounds = Töne abspielen
setting-attention = „Braucht dich“-Banner als dringend markieren
setting-source-banners = Banner
setting-source-sounds = Töne
source-runs = Cloud-Runs
source-handoffs = Übergaben
source-terminals = Terminals
setting-sound-cooldown = Sekunden zwischen zwei Tönen einer Quelle
setting-coalesce-count = Wie viele Meldungen eine Häufung sind
setting-coalesce-window = Sekunden, über die eine Häufung gezählt wird
setting-history-days = Tage, die der Verlauf eine Meldung behält
setting-quiet = Ruhezeiten
setting-breaks-through = „Braucht dich“ kommt trotzdem durch
setting-remote-tmux = Über cmux-tray ssh: ein Klick wählt den tmux-Bereich auf dem anderen Rechner, und solange du ihn ansiehst, kommt kein Banner
language-system = Die des Systems ({ $language })

## Anmeldung

signin-waiting = Warte, bis du den Code in deinem Browser bestätigst…
signin-good-for = Der Code gilt { $span }.
signin-done = Angemeldet als { $email }.
signin-done-detail = Du kannst dieses Fenster schließen: cmux-tray hält dich angemeldet.
signin-expired = Dieser Code ist abgelaufen, bevor er bestätigt wurde.
signin-expired-detail = Hol einen neuen Code und bestätige ihn im Browser.
signin-refused = Die Anmeldung hat nicht geklappt.

## Seiten

page-history-title = cmux-tray — Verlauf
page-settings-title = cmux-tray — Einstellungen
page-signin-title = cmux-tray — Anmelden
page-history = Verlauf
page-following = Verfolgt
page-notices = Meldungen
page-mark-all-read = Alle als gelesen markieren
page-filter-kinds = Meldungen einer Art zeigen
page-search = Meldungen durchsuchen
page-unread = { $n } ungelesen
page-unread-mark = , ungelesen
page-kind-count = { $label } ({ $n })
page-nothing-followed = Nichts wird verfolgt.
page-run-pending = { $state }. Ein Banner kommt, wenn er endet.
page-run-gone = Die Karte dieses Runs gibt es nicht mehr (Karten bleiben 7 Tage).
page-summary = Zusammenfassung
page-link = Link
page-session = Sitzung
page-host = Host
page-run = Run
page-receipt = Beleg
page-no-receipt = Kein Beleg.
page-outcome = Ergebnis: { $outcome }
page-ended = beendet { $when }
page-handoff = Übergabe
page-handoff-id = Übergabe { $id }
page-handoff-not-followed = Hier nicht verfolgt.
page-handoff-closed = Geschlossen.
page-handoff-open = Offen, verfolgt.
page-no-turn = Noch kein Zug ist beendet.
page-notice = Meldung
page-notice-gone = Diese Meldung wird nicht mehr aufbewahrt.
page-settings = Einstellungen
page-account = Konto
page-why = Warum?
page-team = Team
page-personal = { $name } (persönlich)
page-teams-error = Teams konnten nicht aufgelistet werden: { $why }
page-team-chosen = Team { $team } gewählt: seine Runs und Übergaben werden verfolgt
page-sign-in = Anmelden…
page-sign-in-again = Erneut anmelden…
page-sign-out = Abmelden
page-signed-out = Abgemeldet; die gespeicherte Anmeldung wurde gelöscht
page-not-signed-in = Nicht angemeldet.
page-signed-in-as = Angemeldet als { $email }
page-signed-out-of = Abgemeldet von { $email }
page-notifications = Benachrichtigungen
page-per-source = Banner und Töne je Quelle
page-from = Von
page-banners = Banner
page-sounds = Töne
page-switch-on = { $label } an
page-switch-off = { $label } aus
page-source-switch = { $what } für { $source }
page-source-switch-on = { $what } für { $source } an
page-source-switch-off = { $what } für { $source } aus
page-saved = Gespeichert
page-cooldown-before = Ein Ton je Quelle höchstens alle
page-seconds = Sekunden
page-burst-before = Häufungen von mehr als
page-burst-within = zusammenfassen, innerhalb von
page-history-before = Den Verlauf behalten für
page-days = Tage
page-quiet-hours = Ruhezeiten
page-quiet-windows = Zeitfenster der Ruhezeiten
page-add-window = Zeitfenster hinzufügen
page-time-zone = Zeitzone
page-system-zone = Die des Systems ({ $zone })
page-window = Zeitfenster { $n }
page-window-days = Tage von Zeitfenster { $n }
page-window-from = Von
page-window-to = bis
page-window-from-label = Von (Zeitfenster { $n }, HH:MM)
page-window-to-label = Bis (Zeitfenster { $n }, HH:MM)
page-remove = Entfernen
page-remove-window = Zeitfenster { $n } entfernen
page-no-window = Noch kein Zeitfenster.
page-quiet-saved = Ruhezeiten gespeichert
page-zone-saved = Zeitzone gespeichert
page-pause = Pause
page-pause-hour = Für eine Stunde
page-pause-tomorrow = Bis morgen
page-pause-until-resumed = Bis ich fortsetze
page-resume = Jetzt fortsetzen
page-paused = Pausiert
page-resumed = Fortgesetzt
page-general = Allgemein
page-open-at-login = Bei der Anmeldung öffnen
page-open-at-login-on = Bei der Anmeldung öffnen an
page-open-at-login-off = Bei der Anmeldung öffnen aus
page-language = Sprache
page-language-saved = Gespeichert; gilt nach einem Neustart von cmux-tray
page-install-update = Installieren und neu starten
page-update-checking = Das Update wird geprüft…
page-update-downloading = Version { $version } wird geladen…
page-update-downloading-percent = Version { $version } wird geladen: { $percent } %
page-update-installing = Version { $version } wird installiert; cmux-tray startet neu…
page-update-failed = Das Update ist fehlgeschlagen: { $why }
page-advanced = Erweitert
page-advanced-hint = Staging oder eine selbst betriebene Cloud, ein Proxy dorthin, der lokale Socket. Leer heißt Standard. Das gilt, wenn cmux-tray neu startet.
page-default = Standard
page-applies-on-restart = Gespeichert; gilt nach einem Neustart von cmux-tray
page-in-use = Jetzt in Gebrauch: { $value }
page-restart = cmux-tray jetzt neu starten
page-log = Protokoll: { $dir }
page-open-history = Verlauf…
page-open-settings = Einstellungen…
page-quit = cmux-tray beenden
page-signin-heading = Bei cmux anmelden
page-signin-confirm = Bestätige diesen Code auf der cmux-Seite, die sich in deinem Browser geöffnet hat:
page-signin-code = Anmeldecode
page-copy-code = Code kopieren
page-copied = Kopiert
page-open-page-again = Seite erneut öffnen
page-getting-code = Code wird geholt…
page-new-code = Neuen Code holen
page-paste-token = Oder ein Token einfügen
page-token-hint = Für einen Dienst, der API-Tokens ausgibt. Ein eingefügtes Token bleibt, bis cmux-tray beendet wird; der Code oben hält dich angemeldet.
page-api-token = API-Token
page-use-token = Mit diesem Token anmelden
page-open-yourself = Öffne die Seite selbst: { $why }
page-could-not-start = Die Anmeldung konnte nicht starten.
page-no-token = Es wurde kein Token angegeben.

## Verbindung (Einstellungen)

connection-api-url = Der Ursprung der Cloud-API (Staging: https://cloud-api-staging.cmux.dev)
connection-auth-url = Der Ursprung der Anmeldung
connection-proxy = Der Proxy zur Cloud (http://host:port, socks5://host:port) oder none; leer: der aus der Umgebung
connection-socket-path = Wo der lokale Socket liegt (ein absoluter Pfad)
connection-updates-feed = Ein Release-Feed, der einmal am Tag nach einer neueren Version gefragt wird (eine https-URL); leer: keine Prüfung
