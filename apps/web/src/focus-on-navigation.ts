import { useEffect, useRef } from 'preact/hooks';

/** How long a page may take to draw its heading (it may wait for data) before focus stays where it is. */
const HEADING_WAIT_MS = 5000;

/**
 * After an in-app navigation to another path, focus moves to the new page's heading (its h1, made
 * focusable), so a screen reader announces the page and the keyboard starts from it, as a full
 * page load would. The first page of a visit keeps the browser's own focus; a change of the query
 * alone (a search, a filter) keeps focus where the user is.
 */
export function useFocusOnNavigation(path: string): void {
  const first = useRef(true);
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    const main = document.getElementById('main');
    if (!main) return;
    const focusHeading = (): boolean => {
      const heading = main.querySelector('h1');
      if (!heading) return false;
      if (!heading.hasAttribute('tabindex')) heading.setAttribute('tabindex', '-1');
      heading.focus();
      return true;
    };
    if (focusHeading()) return;
    // A page still loading draws its heading later (or shows "Loading…" first): wait for it.
    const observer = new MutationObserver(() => {
      if (focusHeading()) stop();
    });
    const timer = setTimeout(() => stop(), HEADING_WAIT_MS);
    const stop = () => {
      observer.disconnect();
      clearTimeout(timer);
    };
    observer.observe(main, { childList: true, subtree: true });
    return stop;
  }, [path]);
}
